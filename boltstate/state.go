package voterewards

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrLocked is returned by [OpenStore] when another process (or BoltStore)
// has the directory open.
var ErrLocked = errors.New("voterewards: state directory is in use by another process")

const storeFile = "voterewards.db"

// openTimeout is how long OpenStore waits for the lock of an exiting process.
const openTimeout = 500 * time.Millisecond

// Bucket names and keys of the file (strings: no package-level slice).
const (
	bucketMeta    = "meta"
	bucketSeen    = "seen"
	bucketVoters  = "voters"
	bucketPending = "pending"
	bucketExpiry  = "expiry"
	bucketLedger  = "ledger"
	bucketMonths  = "ledger_months"
	bucketBoard   = "board"

	keyVersion  = "version"
	keyCursor   = "cursor"
	keyLastSeen = "last_seen"
	keySince    = "since"
)

// Delivery and expiry records of workers finishing within batchDelay share one
// transaction and fsync (bbolt's DB.Batch). Webhook votes have their own
// group commit (ingestGroup), which waits for no timer.
const (
	batchDelay = time.Millisecond
	batchSize  = defaultConcurrency
)

// storeVersion 2 added the per-voter index and keys votes by platform id;
// 3 the ledger (and the Stats of each vote record). Older files are
// migrated at open.
const storeVersion = 3

// BoltStore is the default [Store]: one bbolt file in a directory. Every change
// is a transaction, so the file survives kill -9 and, fsynced, a power loss.
// It is safe for concurrent use and locked against other processes. Make it
// with [OpenStore]: every method of a zero or nil BoltStore returns an error
// matching [topgg.ErrNotConfigured].
type BoltStore struct {
	db     *bolt.DB
	ingest ingestGroup
}

var _ Store = (*BoltStore)(nil)

// made fails the methods of a BoltStore not made by OpenStore.
func (s *BoltStore) made() error {
	if s == nil || s.db == nil {
		return errStoreNotMade
	}
	return nil
}

// storeOptions are openStore's; noSync (for the benchmarks) skips fsync.
type storeOptions struct{ noSync bool }

// OpenStore opens (creating if needed, dir with mode 0700) the store in
// dir/voterewards.db. If another process has it open, it fails within half a
// second with [ErrLocked]; a file it cannot trust is a *[DamagedStoreError],
// never a crash. Close it when done.
func OpenStore(dir string) (*BoltStore, error) {
	return openStore(dir, storeOptions{})
}

func openStore(dir string, o storeOptions) (*BoltStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("voterewards: open store: %w", err)
	}
	path := filepath.Join(dir, storeFile)
	db, err := openBolt(path, o)
	if err != nil {
		return nil, err
	}
	db.MaxBatchDelay, db.MaxBatchSize = batchDelay, batchSize
	if err := db.Update(prepareBuckets); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("voterewards: open store %s: %w", path, err)
	}
	return &BoltStore{db: db, ingest: ingestGroup{turn: make(chan struct{}, 1)}}, nil
}

func isDamaged(err error) bool {
	var d *DamagedStoreError
	return errors.As(err, &d)
}

// openBolt opens the file once checkFile found it sound, containing a panic
// or fault of bbolt on damage the check missed.
func openBolt(path string, o storeOptions) (*bolt.DB, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	var db *bolt.DB
	err := guard(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{
			Timeout: openTimeout,
			NoSync:  o.noSync,
			// Rebuilt at open, not written at every commit: fewer pages.
			NoFreelistSync: true,
			FreelistType:   bolt.FreelistMapType,
		})
		return err
	})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("%w (%s)", ErrLocked, path)
	case isDamaged(err):
		return nil, err
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, &DamagedStoreError{Path: path, Reason: err.Error()}
	case err != nil:
		return nil, fmt.Errorf("voterewards: open store %s: %w", path, err)
	}
	if err := guard(path, func() error { return db.View(walkAll) }); err != nil {
		_ = db.Close()
		if !isDamaged(err) {
			err = &DamagedStoreError{Path: path, Reason: err.Error()}
		}
		return nil, err
	}
	return db, nil
}

// Close closes the file and releases its lock, once every [Poller.Run] and
// [Poller.Ingest] using the store has returned.
func (s *BoltStore) Close() error {
	if err := s.made(); err != nil {
		return err
	}
	return s.db.Close()
}

// Load implements [Store].
func (s *BoltStore) Load(ctx context.Context) (*Snapshot, error) {
	if err := s.made(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	snap := &Snapshot{}
	err := s.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte(bucketMeta))
		snap.Checkpoint.Cursor = string(meta.Get([]byte(keyCursor)))
		if b := meta.Get([]byte(keyLastSeen)); len(b) == 8 {
			snap.Checkpoint.LastSeen = getTime(b)
		}
		if b := meta.Get([]byte(keySince)); len(b) == 8 {
			snap.Checkpoint.Since = getTime(b)
		}
		for name, out := range map[string]*[]Vote{bucketSeen: &snap.Seen, bucketPending: &snap.Pending, bucketExpiry: &snap.Expiries} {
			if err := tx.Bucket([]byte(name)).ForEach(func(_, v []byte) error {
				vote, err := decodeVote(v)
				*out = append(*out, vote)
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.db.Path(), err)
	}
	return snap, nil
}

// Ingest implements [Store]. Calls without a checkpoint (webhook votes) share
// commits with concurrent ones.
func (s *BoltStore) Ingest(ctx context.Context, cp *Checkpoint, votes []Vote, grace time.Duration) ([]Vote, error) {
	if err := s.made(); err != nil {
		return nil, err
	}
	if cp == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return s.ingest.submit(s.db, votes, grace)
	}
	var added []Vote
	err := s.write(ctx, s.db.Update, "store votes", func(tx *bolt.Tx) error {
		var err error
		if added, err = addVotes(tx, votes, added[:0], grace); err != nil {
			return err
		}
		return putCheckpoint(tx.Bucket([]byte(bucketMeta)), *cp)
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// write runs fn in a write transaction by run (db.Update, or db.Batch to
// share it), unless ctx is done, its error wrapped with what.
func (s *BoltStore) write(ctx context.Context, run func(func(*bolt.Tx) error) error, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := run(fn); err != nil {
		return fmt.Errorf("%s in %s: %w", what, s.db.Path(), err)
	}
	return nil
}

// addVotes adds each vote that is not a duplicate to the dedup set and the
// pending deliveries, counts it in the ledger (with its Stats), and appends
// it to added.
func addVotes(tx *bolt.Tx, votes, added []Vote, grace time.Duration) ([]Vote, error) {
	seen, voters, pending := tx.Bucket([]byte(bucketSeen)), tx.Bucket([]byte(bucketVoters)), tx.Bucket([]byte(bucketPending))
	ledger := openLedger(tx)
	c := voters.Cursor() // one for the transaction: Seek starts afresh
	var kb [64]byte
	for _, v := range votes {
		id := v.lane()
		if duplicateIn(c, id, v.CreatedAt, kb[:0]) {
			continue
		}
		var err error
		if v.Stats, err = ledger.count(v, grace); err != nil {
			return nil, err
		}
		k, val := seenKey(v), encodeVote(v)
		// Put copies the key, so the voter key may live on the stack.
		if err := errors.Join(seen.Put(k, val), pending.Put(k, val), voters.Put(appendVoterKey(kb[:0], id, v.CreatedAt), nil)); err != nil {
			return nil, err
		}
		added = append(added, v)
	}
	return added, nil
}

// duplicateIn reports whether the per-voter index holds a vote of id created
// less than DedupWindow from t: the first key after t-DedupWindow is the only
// candidate.
func duplicateIn(c *bolt.Cursor, id string, t time.Time, buf []byte) bool {
	from := appendVoterKey(buf, id, t.Add(-DedupWindow+1))
	k, _ := c.Seek(from)
	prefix := from[:len(from)-8]
	if k == nil || len(k) != len(from) || !bytes.HasPrefix(k, prefix) {
		return false
	}
	return getTime(k[len(prefix):]).Sub(t) < DedupWindow
}

func putCheckpoint(meta *bolt.Bucket, cp Checkpoint) error {
	var ls, since [8]byte
	putTime(ls[:], cp.LastSeen)
	putTime(since[:], cp.Since)
	return errors.Join(
		meta.Put([]byte(keyCursor), []byte(cp.Cursor)),
		meta.Put([]byte(keyLastSeen), ls[:]),
		meta.Put([]byte(keySince), since[:]),
	)
}

// Delivered implements [Store].
func (s *BoltStore) Delivered(ctx context.Context, v Vote, expire bool) error {
	if err := s.made(); err != nil {
		return err
	}
	return s.write(ctx, s.db.Batch, "record delivery of "+v.Key(), func(tx *bolt.Tx) error {
		err := tx.Bucket([]byte(bucketPending)).Delete(seenKey(v))
		if err == nil && expire {
			err = tx.Bucket([]byte(bucketExpiry)).Put(expiryKey(v), encodeVote(v))
		}
		return err
	})
}

// Expired implements [Store].
func (s *BoltStore) Expired(ctx context.Context, v Vote) error {
	if err := s.made(); err != nil {
		return err
	}
	return s.write(ctx, s.db.Batch, "record expiry of "+v.Key(), func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketExpiry)).Delete(expiryKey(v))
	})
}

// Prune implements [Store].
func (s *BoltStore) Prune(ctx context.Context, createdBefore, now time.Time) error {
	if err := s.made(); err != nil {
		return err
	}
	var limit [8]byte
	putTime(limit[:], createdBefore)
	return s.write(ctx, s.db.Update, "prune store", func(tx *bolt.Tx) error {
		seen, voters := tx.Bucket([]byte(bucketSeen)), tx.Bucket([]byte(bucketVoters))
		var doomed [][]byte
		c := seen.Cursor()
		for k, v := c.First(); k != nil && bytes.Compare(k[:8], limit[:]) < 0; k, v = c.Next() {
			if len(v) < 17 || getTime(v[9:17]).After(now) {
				break // the rest expires later still, as a rule
			}
			doomed = append(doomed, bytes.Clone(k))
		}
		// Deleting after the walk: bbolt cursors may skip a key after Delete.
		for _, k := range doomed {
			if err := errors.Join(seen.Delete(k), voters.Delete(voterKey(string(k[8:]), getTime(k[:8])))); err != nil {
				return err
			}
		}
		return nil
	})
}
