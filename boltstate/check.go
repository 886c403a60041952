package boltstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// DamagedError is what [Open] returns for a state file it cannot trust
// (truncated, overwritten, corrupted), refused before anything is written to it.
type DamagedError struct {
	// Path is the damaged file.
	Path string
	// Reason says what the check found.
	Reason string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("boltstate: state file %s is damaged (%s): stop the bot, move the file aside (keep it for inspection) "+
		"and start again; a new file is created, and the first run re-reads the lookback window of the vote history (votes "+
		"in it may be rewarded again), publishes the commands again and has no reminder opt-ins", e.Path, e.Reason)
}

// The bbolt file format, as far as checkFile reads it (go.etcd.io/bbolt
// internal/common). bbolt validates only the meta pages at open, then walks
// the trees in a goroutine of its own, where a damaged page is a crash no
// recover reaches.
const (
	pageHeaderSize = 16
	elemSize       = 16 // branch and leaf elements are both 16 bytes
	flagBranch     = 0x01
	flagLeaf       = 0x02
	flagFreelist   = 0x10
	leafBucketFlag = 0x01
	maxTreeDepth   = 64
	noFreelist     = ^uint64(0)
)

// checkFile validates a bbolt file before a writable open: bbolt reads its
// meta pages (read-only, which walks no tree), then every page reachable from
// the root must lie in the file, carry its own id and a valid type, hold its
// elements in bounds and in order, and be reached once. A missing or empty
// file is fine. A freelist page (this package writes none, a tool with bbolt's
// defaults does) must list only pages in the file and not in use, which bbolt
// would write over.
func checkFile(path string) error {
	f, err := os.Open(path) // not read here: another process may be writing it
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
		_ = f.Close()
	}
	if err != nil {
		return fmt.Errorf("boltstate: open %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return nil // bbolt writes it under its lock
	}
	c := &fileCheck{seen: map[uint64]bool{}}
	var readErr error
	err = guard(path, func() error {
		// bbolt's shared lock waits (up to openTimeout) for a process creating
		// or writing the file: the file is read only whole.
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
		if err != nil {
			return err
		}
		defer db.Close()
		c.b, readErr = os.ReadFile(path) // the vote window: tens of MB at most
		return db.View(func(tx *bolt.Tx) error {
			c.ps, c.root, c.txid = int64(db.Info().PageSize), uint64(tx.Cursor().Bucket().Root()), uint64(tx.ID())
			c.pgid = uint64(tx.Size() / c.ps)
			return nil
		})
	})
	switch {
	case err != nil:
		return openError(path, err, true) // bbolt refused the file it read
	case readErr != nil:
		return fmt.Errorf("boltstate: open %s: %w", path, readErr)
	}
	reason := fmt.Sprintf("truncated: the meta page counts %d pages of %d bytes, the file has %d bytes", c.pgid, c.ps, len(c.b))
	if c.pgid >= 2 && int64(c.pgid) <= int64(len(c.b))/c.ps {
		if _, reason = c.checkTree(c.root, 0, nil, nil); reason == "" {
			reason = c.checkFreelist()
		}
	}
	if reason != "" {
		return &DamagedError{Path: path, Reason: reason}
	}
	return nil
}

type fileCheck struct {
	b          []byte
	ps         int64
	pgid, root uint64 // of the meta page bbolt chose, of transaction txid
	txid       uint64
	seen       map[uint64]bool
}

// checkTree checks the B+tree rooted at page id, whose keys must lie in
// [lo, hi) (nil: unbounded), as strictly as bbolt's walk; it returns its
// largest key.
func (c *fileCheck) checkTree(id uint64, depth int, lo, hi []byte) ([]byte, string) {
	if depth > maxTreeDepth {
		return nil, "tree too deep"
	}
	p, reason := c.page(id)
	if reason != "" {
		return nil, reason
	}
	return c.checkNode(p, depth, lo, hi)
}

// page returns page id whole (with its overflow) once it lies in the file,
// carries its id, and was not reached before.
func (c *fileCheck) page(id uint64) ([]byte, string) {
	switch {
	case id < 2 || id >= c.pgid:
		return nil, fmt.Sprintf("page %d out of range [2, %d)", id, c.pgid)
	case c.seen[id]:
		return nil, fmt.Sprintf("page %d reached twice", id)
	}
	le := binary.LittleEndian
	p := c.b[int64(id)*c.ps:]          // id < pgid <= size/ps
	n := uint64(le.Uint32(p[12:])) + 1 // pages, with the overflow
	switch {
	case le.Uint64(p) != id:
		return nil, fmt.Sprintf("page %d carries id %d", id, le.Uint64(p))
	case id+n > c.pgid:
		return nil, fmt.Sprintf("page %d overflows past the last page", id)
	}
	for i := range n {
		c.seen[id+i] = true
	}
	return p[:int64(n)*c.ps], ""
}

// checkFreelist checks the freelist page of the meta page bbolt chose, if
// any, once checkTree marked the pages in use: bbolt would write over a page
// it lists, so each must lie in the file and be seen once.
func (c *fileCheck) checkFreelist() string {
	le := binary.LittleEndian
	meta := c.b[pageHeaderSize:] // bbolt's meta: freelist page at 32, txid at 48
	if le.Uint64(meta[48:]) != c.txid {
		meta = c.b[c.ps+pageHeaderSize:]
	}
	id := le.Uint64(meta[32:])
	if id == noFreelist {
		return ""
	}
	p, reason := c.page(id)
	switch {
	case reason != "":
		return "freelist: " + reason
	case le.Uint16(p[8:]) != flagFreelist:
		return fmt.Sprintf("freelist: page %d has type %#x", id, le.Uint16(p[8:]))
	}
	count, ids := uint64(le.Uint16(p[10:])), p[pageHeaderSize:]
	if count == 0xFFFF { // the count is the first id
		count, ids = le.Uint64(ids), ids[8:]
	}
	if count > uint64(len(ids)/8) {
		return fmt.Sprintf("freelist: %d ids do not fit its page", count)
	}
	for i := range count {
		free := le.Uint64(ids[8*i:])
		if free < 2 || free >= c.pgid || c.seen[free] {
			return fmt.Sprintf("freelist: page %d in use or out of range [2, %d)", free, c.pgid)
		}
		c.seen[free] = true
	}
	return ""
}

// checkNode checks a page's elements (p starts with its header), then
// descends into a branch's children and a leaf's buckets.
func (c *fileCheck) checkNode(p []byte, depth int, lo, hi []byte) ([]byte, string) {
	le := binary.LittleEndian
	if len(p) < pageHeaderSize {
		return nil, "short page"
	}
	flags, count := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	switch {
	case flags != flagBranch && flags != flagLeaf:
		return nil, fmt.Sprintf("page has type %#x", flags)
	case pageHeaderSize+count*elemSize > len(p):
		return nil, fmt.Sprintf("page of %d bytes cannot hold %d elements", len(p), count)
	case count == 0:
		return nil, ""
	}
	keys, vals := make([][]byte, count+1), make([][]byte, count)
	for i := range count {
		var ok bool
		if keys[i], vals[i], ok = element(p, i, flags == flagBranch); !ok {
			return nil, "element out of its page"
		}
	}
	keys[count] = hi // a branch's child i holds keys in [keys[i], keys[i+1])
	prev := lo       // then the largest key so far
	for i, key := range keys[:count] {
		// As bbolt's verifyKeyOrder: above the last, strictly but for a first
		// key (equal to its parent's), and below the parent's next key.
		if c := bytes.Compare(prev, key); c > 0 || c == 0 && i > 0 || hi != nil && bytes.Compare(key, hi) >= 0 {
			return nil, "keys out of order"
		}
		el, reason := p[pageHeaderSize+i*elemSize:], ""
		switch prev = key; {
		case flags == flagBranch:
			prev, reason = c.checkTree(le.Uint64(el[8:]), depth+1, key, keys[i+1])
		case le.Uint32(el)&leafBucketFlag != 0:
			reason = c.checkBucket(vals[i], depth)
		}
		if reason != "" {
			return nil, reason
		}
	}
	return prev, ""
}

// element returns the key and value of element i of page p, or false if out of it.
func element(p []byte, i int, branch bool) (key, val []byte, ok bool) {
	le := binary.LittleEndian
	e := pageHeaderSize + i*elemSize
	el := p[e : e+elemSize]
	pos, ks, vs := int64(le.Uint32(el[4:])), int64(le.Uint32(el[8:])), int64(le.Uint32(el[12:]))
	if branch {
		pos, ks, vs = int64(le.Uint32(el[0:])), int64(le.Uint32(el[4:])), 0
	}
	start := int64(e) + pos
	if start+ks+vs > int64(len(p)) {
		return nil, nil, false
	}
	return p[start : start+ks], p[start+ks : start+ks+vs], true
}

// checkBucket checks a bucket value: its root page, or its inline page.
func (c *fileCheck) checkBucket(v []byte, depth int) string {
	if len(v) < 16 {
		return "short bucket header"
	}
	if root := binary.LittleEndian.Uint64(v); root != 0 {
		_, reason := c.checkTree(root, depth+1, nil, nil)
		return reason
	}
	inline := v[16:]
	if len(inline) < pageHeaderSize {
		return "short inline bucket"
	}
	if f := binary.LittleEndian.Uint16(inline[8:]); f != flagLeaf {
		return fmt.Sprintf("inline bucket page has type %#x", f)
	}
	_, reason := c.checkNode(inline, depth+1, nil, nil)
	return reason
}

// guard runs fn, turning a panic or a memory fault (SIGSEGV/SIGBUS on the
// mmapped file) into a *DamagedError for path.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &DamagedError{Path: path, Reason: fmt.Sprintf("bbolt failed reading it: %v", r)}
		}
	}()
	return fn()
}
