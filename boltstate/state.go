// Package boltstate keeps all of a bot's state (votes and their ledger, the
// last published command hash, the reminder opt-ins) in one bbolt file of a
// directory: the [voterewards.State] of a bot in one process.
package boltstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/dblkit/go-topgg/voterewards"
)

var (
	// ErrLocked is returned by [Open] when another process (or State) has the directory open.
	ErrLocked = errors.New("boltstate: state directory is in use by another process")
	// ErrFileTooNew is returned by [Open] for a file whose store version is
	// newer than this release's (a newer go-topgg wrote it): upgrade.
	ErrFileTooNew = errors.New("boltstate: the state file was written by a newer release of go-topgg")
)

// storeFile is the state's file, named as when it kept only the votes.
const storeFile = "voterewards.db"

// openTimeout is how long Open waits for the lock of an exiting process.
const openTimeout = 500 * time.Millisecond

// Bucket names and keys of the file (strings: no package-level slice).
const (
	bucketMeta      = "meta"
	bucketVoters    = "voters" // per voter: its ledger record, then its votes of the dedup set
	bucketPending   = "pending"
	bucketExpiry    = "expiry"
	bucketMonths    = "ledger_months"
	bucketBoard     = "board"
	bucketCommands  = "commands"
	bucketReminders = "reminders" // opted-in user -> key of the last vote reminded, or empty

	keyVersion  = "version"
	keyCursor   = "cursor"
	keyLastSeen = "last_seen"
	keySince    = "since"
	keyHash     = "hash"

	// The dedup set and the ledger of version 3, moved into voters by version 4.
	bucketSeen   = "seen"
	bucketLedger = "ledger"
)

// batchDelay is how long a delivery, expiry or reminder record waits to share
// the commit of a webhook vote or of other records (ingestGroup).
const batchDelay = time.Millisecond

// storeVersion 2 added the per-voter index and keys votes by platform id;
// 3 the ledger; 4 keeps the dedup set and the ledger in the per-voter index
// (a vote's commit writes one leaf for both). Older files are migrated at open.
const storeVersion = 4

// State is all of a bot's state in one bbolt file of a directory. Every
// change is a transaction, so the file survives kill -9 and a power loss.
// Safe for concurrent use, and locked against other processes. Make it with
// [Open].
type State struct {
	db     *bolt.DB
	ingest ingestGroup
}

var _ voterewards.State = (*State)(nil)

// Open opens (creating if needed, mode 0700) the state in dir, moving in older
// releases' files. Errors: [ErrLocked] if another process has it open,
// [ErrFileTooNew], or a *[DamagedError] for a file it cannot trust or read as
// its version says, never a crash. Close it when done.
func Open(dir string) (*State, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("boltstate: open: %w", err)
	}
	path := filepath.Join(dir, storeFile)
	db, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	var legacy []string
	err = db.Update(func(tx *bolt.Tx) error {
		if err := prepareBuckets(tx); errors.Is(err, ErrFileTooNew) {
			return fmt.Errorf("boltstate: open %s: %w", path, err)
		} else if err != nil { // records its version cannot hold: damage
			return &DamagedError{Path: path, Reason: err.Error()}
		}
		legacy, err = moveLegacy(tx, dir)
		return err
	})
	if err == nil {
		err = removeLegacy(dir, legacy)
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &State{db: db, ingest: ingestGroup{turn: make(chan struct{}, 1), delay: batchDelay}}, nil
}

// openBolt opens the file once checkFile found it sound, containing bbolt's
// panics and faults on damage the check missed. Between the check's shared lock
// and this exclusive one, only a bbolt writer (which keeps it sound) can change it.
func openBolt(path string) (*bolt.DB, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	var db *bolt.DB
	err := guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout,
			// Rebuilt at open, not written at every commit: fewer pages.
			NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
		if err == nil { // every record read once: damage the check missed shows here
			err = db.View(func(tx *bolt.Tx) error {
				return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return b.ForEach(func(_, _ []byte) error { return nil }) })
			})
		}
		return err
	})
	if err != nil {
		if db != nil {
			_ = db.Close()
		}
		return nil, openError(path, err, false)
	}
	return db, nil
}

// openError is what a failed open of path returns: [ErrLocked], or a
// *[DamagedError] for a panic, a refusal by bbolt or (if damaged) any error.
func openError(path string, err error, damaged bool) error {
	var d *DamagedError
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("%w (%s)", ErrLocked, path)
	case errors.As(err, &d):
		return err
	case damaged, errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return &DamagedError{Path: path, Reason: err.Error()}
	}
	return fmt.Errorf("boltstate: open %s: %w", path, err)
}

// Close closes the file and releases its lock, once every Poller using it returned.
func (s *State) Close() error {
	return s.db.Close()
}

// UseFence implements [voterewards.State]: a directory is one process's.
func (s *State) UseFence(f voterewards.Fence) error {
	if f == nil {
		return nil
	}
	return voterewards.ErrNotShared
}

// Ping returns nil when the state can take a write now (an empty commit).
func (s *State) Ping(ctx context.Context) error {
	return s.write(ctx, lead, "ping", func(*bolt.Tx) error { return nil })
}

// LoadHash implements [voterewards.State].
func (s *State) LoadHash(ctx context.Context) (hash string, err error) {
	err = s.read(ctx, "the command hash", func(tx *bolt.Tx) error {
		hash = string(tx.Bucket([]byte(bucketCommands)).Get([]byte(keyHash)))
		return nil
	})
	return hash, err
}

// SaveHash implements [voterewards.State].
func (s *State) SaveHash(ctx context.Context, hash string) error {
	return s.write(ctx, lead, "save the command hash", func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketCommands)).Put([]byte(keyHash), []byte(hash))
	})
}

// read runs fn in a read transaction, unless ctx is done.
func (s *State) read(ctx context.Context, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.db.View(fn); err != nil {
		return fmt.Errorf("boltstate: reading %s in %s: %w", what, s.db.Path(), err)
	}
	return nil
}

// Load implements [voterewards.Store].
func (s *State) Load(ctx context.Context) (*voterewards.Snapshot, error) {
	snap := &voterewards.Snapshot{}
	err := s.read(ctx, "the votes", func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte(bucketMeta))
		snap.Checkpoint.Cursor = string(meta.Get([]byte(keyCursor)))
		// Zero if missing (a new file) or damaged, as before the first checkpoint.
		snap.Checkpoint.LastSeen, _ = decode(meta.Get([]byte(keyLastSeen)), (*decoder).time)
		snap.Checkpoint.Since, _ = decode(meta.Get([]byte(keySince)), (*decoder).time)
		for name, out := range map[string]*[]voterewards.Vote{bucketVoters: &snap.Seen, bucketPending: &snap.Pending, bucketExpiry: &snap.Expiries} {
			if err := tx.Bucket([]byte(name)).ForEach(func(k, v []byte) error {
				if name == bucketVoters && !isVoteKey(k) {
					return nil // a ledger record
				}
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
		return nil, err
	}
	return snap, nil
}

// Ingest implements [voterewards.Store]; concurrent calls share commits.
func (s *State) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	var added []voterewards.Vote
	err := s.write(ctx, lead, "store votes", func(tx *bolt.Tx) (err error) {
		if added, err = addVotes(tx, votes, added[:0], grace); err != nil || cp == nil {
			return err
		}
		meta := tx.Bucket([]byte(bucketMeta))
		return errors.Join(
			meta.Put([]byte(keyCursor), []byte(cp.Cursor)),
			meta.Put([]byte(keyLastSeen), appendTime(nil, cp.LastSeen)),
			meta.Put([]byte(keySince), appendTime(nil, cp.Since)),
		)
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// write runs fn in a write transaction of the group commit (ingestGroup), at
// once or (if wait) after waiting to ride in another's, unless ctx ends first.
func (s *State) write(ctx context.Context, wait bool, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.ingest.submit(ctx, s.db, &ingestReq{write: fn}, wait); err != nil {
		return fmt.Errorf("%s in %s: %w", what, s.db.Path(), err)
	}
	return nil
}

// How a write takes the group's turn: at once, or after riding (ingestGroup).
const lead, ride = false, true

// addVotes adds each vote that is not a duplicate to the dedup set (beside
// its voter's ledger record) and the pending deliveries, counts it in the
// ledger, and appends it to added.
func addVotes(tx *bolt.Tx, votes, added []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	voters, pending := tx.Bucket([]byte(bucketVoters)), tx.Bucket([]byte(bucketPending))
	ledger := openLedger(tx)
	c := voters.Cursor() // one for the transaction: Seek starts afresh
	var kb [64]byte
	for _, v := range votes {
		id := voter(v)
		if duplicateIn(c, id, v.CreatedAt, kb[:0]) {
			continue
		}
		var err error
		if v.Stats, err = ledger.count(v, grace); err != nil {
			return nil, err
		}
		val := encodeVote(v)
		// Put copies the key, so the voter key may live on the stack.
		if err := errors.Join(voters.Put(appendVoterKey(kb[:0], id, v.CreatedAt), val), pending.Put(seenKey(v), val)); err != nil {
			return nil, err
		}
		added = append(added, v)
	}
	return added, nil
}

// duplicateIn reports whether the per-voter index holds a vote of id created
// less than DedupWindow from t: the first key after t-DedupWindow.
func duplicateIn(c *bolt.Cursor, id string, t time.Time, buf []byte) bool {
	from := appendVoterKey(buf, id, t.Add(-voterewards.DedupWindow+1))
	k, _ := c.Seek(from)
	prefix := from[:len(from)-8]
	if k == nil || len(k) != len(from) || !bytes.HasPrefix(k, prefix) {
		return false
	}
	return getTime(k[len(prefix):]).Sub(t) < voterewards.DedupWindow
}

// Delivered implements [voterewards.Store].
func (s *State) Delivered(ctx context.Context, v voterewards.Vote, expire bool) error {
	return s.write(ctx, ride, "record delivery of "+v.Key(), func(tx *bolt.Tx) error {
		err := tx.Bucket([]byte(bucketPending)).Delete(seenKey(v))
		if err == nil && expire {
			err = tx.Bucket([]byte(bucketExpiry)).Put(expiryKey(v), encodeVote(v))
		}
		return err
	})
}

// Expired implements [voterewards.Store].
func (s *State) Expired(ctx context.Context, v voterewards.Vote) error {
	return s.write(ctx, ride, "record expiry of "+v.Key(), func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketExpiry)).Delete(expiryKey(v))
	})
}

// Prune implements [voterewards.Store]. It finds the votes in a read (a walk
// of every voter's) and deletes them in a write: a vote record never changes,
// and one found expired stays so.
func (s *State) Prune(ctx context.Context, createdBefore, now time.Time) error {
	limit := appendTime(nil, createdBefore)
	var doomed [][]byte
	err := s.read(ctx, "the votes to prune", func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketVoters)).ForEach(func(k, v []byte) error {
			if exp, ok := voteExpires(v); ok && isVoteKey(k) && bytes.Compare(k[len(k)-8:], limit) < 0 && !exp.After(now) {
				doomed = append(doomed, bytes.Clone(k))
			}
			return nil
		})
	})
	if err != nil || len(doomed) == 0 {
		return err
	}
	return s.write(ctx, lead, "prune store", func(tx *bolt.Tx) error {
		voters := tx.Bucket([]byte(bucketVoters))
		for _, k := range doomed {
			if err := voters.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// Format prints the State as "boltstate.State" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*State) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "boltstate.State") }
