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

// ErrLocked is returned by [OpenStore] when another process (or another
// BoltStore in this process) has the directory open. Match it with errors.Is.
var ErrLocked = errors.New("voterewards: state directory is in use by another process")

// storeFile is the name of the bbolt file [OpenStore] keeps in its directory.
const storeFile = "voterewards.db"

// openTimeout is how long OpenStore waits for the file lock: long enough to
// ride out a process that is just exiting, short enough to fail clearly.
const openTimeout = 500 * time.Millisecond

// Bucket names and keys of the file; converted to []byte where used, so that
// no package-level slice can be changed.
const (
	bucketMeta    = "meta"
	bucketSeen    = "seen"
	bucketVoters  = "voters"
	bucketPending = "pending"
	bucketExpiry  = "expiry"

	keyVersion  = "version"
	keyCursor   = "cursor"
	keyLastSeen = "last_seen"
	keySince    = "since"
)

// Batching of the delivery and expiry records (bbolt's DB.Batch): the records
// of workers that finish within batchDelay of each other share one
// transaction and one fsync. A full batch commits at once, so batchSize is the
// default Concurrency: with the default pool (or a multiple of it) busy
// workers fill batches and rarely wait for the delay; with fewer workers each
// record waits up to batchDelay, small next to a handler's network call.
//
// Webhook votes ([Poller.Ingest]) have a group commit of their own (see
// ingestGroup), which waits for no timer.
const (
	batchDelay = time.Millisecond
	batchSize  = DefaultConcurrency
)

// storeVersion 2 added the per-voter index (cross-source dedup) and keys
// votes by platform id; a version 1 file is migrated at open.
const storeVersion = 2

// BoltStore is the default [Store]: one bbolt file in a directory. Every change
// is a bbolt transaction, so the file holds the state before or after it even
// if the process is killed (kill -9) in the middle; with the default fsync it
// also survives a power loss. Delivery records that arrive together (several
// workers finishing at once) share one transaction and one fsync. It is safe
// for concurrent use; the file is locked against other processes while open.
type BoltStore struct {
	db     *bolt.DB
	path   string
	ingest ingestGroup
}

var _ Store = (*BoltStore)(nil)

// storeOptions are the choices of openStore. noSync skips fsync after each
// transaction (the benchmarks compare it): the state still survives the
// process being killed, but not a power loss.
type storeOptions struct{ noSync bool }

// OpenStore opens (creating if needed) the store in dir, in the file
// voterewards.db; it creates dir with mode 0700. If another process has it
// open, it fails within half a second with an error matching [ErrLocked]. A
// file it cannot trust (truncated, corrupted) is a *[DamagedStoreError]
// (errors.As), never a crash. Close it when done.
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
	return &BoltStore{db: db, path: path}, nil
}

// isDamaged reports a *DamagedStoreError in err's chain.
func isDamaged(err error) bool {
	var d *DamagedStoreError
	return errors.As(err, &d)
}

// openBolt opens the file once checkFile found it sound, containing any panic
// or fault of bbolt on a file damaged in a way the check missed.
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
			// The freelist is rebuilt at open instead of written at every
			// commit: fewer pages per delivery record.
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

// prepareBuckets creates the buckets of a new file and migrates an old one.
func prepareBuckets(tx *bolt.Tx) error {
	for _, name := range []string{bucketMeta, bucketSeen, bucketVoters, bucketPending, bucketExpiry} {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return err
		}
	}
	meta := tx.Bucket([]byte(bucketMeta))
	switch v := meta.Get([]byte(keyVersion)); {
	case v == nil:
	case bytes.Equal(v, []byte{1}):
		if err := migrateV1(tx); err != nil {
			return fmt.Errorf("migrating from version 1: %w", err)
		}
	case !bytes.Equal(v, []byte{storeVersion}):
		return fmt.Errorf("unknown store version %v (written by a newer release?)", v)
	default:
		return nil
	}
	return meta.Put([]byte(keyVersion), []byte{storeVersion})
}

// migrateV1 re-keys a version 1 file: votes were keyed by user id (now by
// platform id), and the per-voter index did not exist.
func migrateV1(tx *bolt.Tx) error {
	for _, name := range []string{bucketSeen, bucketPending, bucketExpiry} {
		b := tx.Bucket([]byte(name))
		var votes []Vote
		if err := b.ForEach(func(_, val []byte) error {
			v, err := decodeVote(val)
			votes = append(votes, v)
			return err
		}); err != nil {
			return err
		}
		if err := tx.DeleteBucket([]byte(name)); err != nil {
			return err
		}
		nb, err := tx.CreateBucket([]byte(name))
		if err != nil {
			return err
		}
		for _, v := range votes {
			k := seenKey(v)
			if name == bucketExpiry {
				k = expiryKey(v)
			}
			if err := nb.Put(k, encodeVote(v)); err != nil {
				return err
			}
			if name == bucketSeen {
				if err := tx.Bucket([]byte(bucketVoters)).Put(voterKey(v.lane(), v.CreatedAt), nil); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Path returns the path of the bbolt file.
func (s *BoltStore) Path() string { return s.path }

// Close closes the file and releases its lock. Call it once every [Poller.Run]
// (and [Poller.Ingest]) using the store has returned.
func (s *BoltStore) Close() error { return s.db.Close() }

// Load implements [Store].
func (s *BoltStore) Load(ctx context.Context) (*Snapshot, error) {
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
		for _, l := range []struct {
			bucket string
			out    *[]Vote
		}{{bucketSeen, &snap.Seen}, {bucketPending, &snap.Pending}, {bucketExpiry, &snap.Expiries}} {
			err := tx.Bucket([]byte(l.bucket)).ForEach(func(_, v []byte) error {
				vote, err := decodeVote(v)
				if err != nil {
					return err
				}
				*l.out = append(*l.out, vote)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.path, err)
	}
	return snap, nil
}

// Ingest implements [Store]. Calls without a checkpoint (webhook votes)
// share transactions and fsyncs with the concurrent ones (a group commit).
func (s *BoltStore) Ingest(ctx context.Context, cp *Checkpoint, votes []Vote) ([]Vote, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cp == nil {
		return s.ingest.submit(s.db, votes)
	}
	var added []Vote
	// The poller's pages: one caller and a large change, no group to join.
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		if added, err = addVotes(tx, votes, added[:0]); err != nil {
			return err
		}
		return putCheckpoint(tx.Bucket([]byte(bucketMeta)), *cp)
	})
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", s.path, err)
	}
	return added, nil
}

// addVotes adds to the dedup set and the pending deliveries each vote that
// is not a duplicate, appending the added ones to added.
func addVotes(tx *bolt.Tx, votes, added []Vote) ([]Vote, error) {
	seen, voters, pending := tx.Bucket([]byte(bucketSeen)), tx.Bucket([]byte(bucketVoters)), tx.Bucket([]byte(bucketPending))
	c := voters.Cursor() // one for the transaction: Seek starts afresh
	var kb [64]byte
	for _, v := range votes {
		id := v.lane()
		if duplicateIn(c, id, v.CreatedAt, kb[:0]) {
			continue
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
// less than DedupWindow from t: the first key at or after t-DedupWindow (+1ns)
// is the only candidate.
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
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte(bucketPending)).Delete(seenKey(v)); err != nil {
			return err
		}
		if expire {
			return tx.Bucket([]byte(bucketExpiry)).Put(expiryKey(v), encodeVote(v))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("voterewards: record delivery of %s: %w", v.Key(), err)
	}
	return nil
}

// Expired implements [Store].
func (s *BoltStore) Expired(ctx context.Context, v Vote) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucketExpiry)).Delete(expiryKey(v)) })
	if err != nil {
		return fmt.Errorf("voterewards: record expiry of %s: %w", v.Key(), err)
	}
	return nil
}

// Prune implements [Store].
func (s *BoltStore) Prune(ctx context.Context, createdBefore, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var limit [8]byte
	putTime(limit[:], createdBefore)
	err := s.db.Update(func(tx *bolt.Tx) error {
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
	if err != nil {
		return fmt.Errorf("voterewards: prune store: %w", err)
	}
	return nil
}

// update runs fn in a write transaction shared with the changes other
// goroutines submit within batchDelay (bbolt's DB.Batch), and returns once
// that transaction is durable. fn may run more than once: if a change of the
// batch fails, bbolt runs the others again without it and the failing one
// alone, so fn must set every result it reports afresh on each run. A panic in
// fn fails the batch's run of fn and is raised again in the caller when fn
// runs alone.
func (s *BoltStore) update(fn func(*bolt.Tx) error) error { return s.db.Batch(fn) }
