package boltstate

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/dblkit/go-topgg/voterewards"
)

// prepareBuckets creates the buckets of a new file and migrates an old one.
func prepareBuckets(tx *bolt.Tx) error {
	for _, name := range []string{bucketMeta, bucketVoters, bucketPending, bucketExpiry, bucketMonths, bucketBoard,
		bucketCommands, bucketReminders} {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return err
		}
	}
	meta := tx.Bucket([]byte(bucketMeta))
	switch v := meta.Get([]byte(keyVersion)); {
	case v == nil: // a new file
	case len(v) == 1 && v[0] > storeVersion:
		return fmt.Errorf("%w: store version %d, this release reads up to %d", ErrFileTooNew, v[0], storeVersion)
	case len(v) != 1 || v[0] < 1:
		return fmt.Errorf("store version %v is none", v)
	case v[0] == storeVersion:
		return nil
	default:
		for _, name := range []string{bucketSeen, bucketLedger} { // version 3's, moved by migrateV3
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return err
			}
		}
		steps := []func(*bolt.Tx) error{migrateV1, migrateV2, migrateV3} // from version 1, 2, 3
		for from := v[0]; from < storeVersion; from++ {
			if err := steps[from-1](tx); err != nil {
				return fmt.Errorf("migrating from version %d: %w", from, err)
			}
		}
	}
	return meta.Put([]byte(keyVersion), []byte{storeVersion})
}

// migrateV1 re-keys a version 1 file (keyed by user id, no voter index).
func migrateV1(tx *bolt.Tx) error {
	voters := tx.Bucket([]byte(bucketVoters))
	for _, name := range []string{bucketSeen, bucketPending, bucketExpiry} {
		if err := rewrite(tx, name, func(v *voterewards.Vote) error {
			if name != bucketSeen {
				return nil
			}
			return voters.Put(appendVoterKey(nil, voter(*v), v.CreatedAt), nil)
		}); err != nil {
			return err
		}
	}
	return nil
}

// migrateV2 starts the ledger of a version 2 file from the votes of its
// dedup set, in creation order with DefaultStreakGrace, so that running
// streaks go on; pending work gets those votes' Stats.
func migrateV2(tx *bolt.Tx) error {
	ledger := openLedger(tx)
	counted := map[string]voterewards.Stats{}
	if err := rewrite(tx, bucketSeen, func(v *voterewards.Vote) (err error) {
		v.Stats, err = ledger.count(*v, voterewards.DefaultStreakGrace)
		counted[v.Key()] = v.Stats
		return err
	}); err != nil {
		return err
	}
	for _, name := range []string{bucketPending, bucketExpiry} {
		if err := rewrite(tx, name, func(v *voterewards.Vote) error { v.Stats = counted[v.Key()]; return nil }); err != nil {
			return err
		}
	}
	return nil
}

// migrateV3 moves a version 3 file's dedup set (seen) and ledger into the
// voters bucket, whose vote keys (the per-voter index, empty values) it
// replaces by the dedup set's votes; ledger records a migrateV2 wrote there stay.
func migrateV3(tx *bolt.Tx) error {
	voters, seen, ledger := tx.Bucket([]byte(bucketVoters)), tx.Bucket([]byte(bucketSeen)), tx.Bucket([]byte(bucketLedger))
	var index [][]byte
	if err := voters.ForEach(func(k, _ []byte) error {
		if isVoteKey(k) {
			index = append(index, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		return err
	}
	// Deleting after the walk: bbolt cursors may skip a key after Delete.
	for _, k := range index {
		if err := voters.Delete(k); err != nil {
			return err
		}
	}
	err := errors.Join(
		seen.ForEach(func(k, v []byte) error {
			if len(k) < 8 {
				return errBadRecord
			}
			return voters.Put(appendVoterKey(nil, string(k[8:]), getTime(k[:8])), v)
		}),
		ledger.ForEach(func(k, v []byte) error { return voters.Put(ledgerKey(string(k)), v) }),
	)
	if err != nil {
		return err
	}
	return errors.Join(tx.DeleteBucket([]byte(bucketSeen)), tx.DeleteBucket([]byte(bucketLedger)))
}

// rewrite writes bucket name's vote records afresh, each after fn (which
// may change it), under the key this version gives it, in key order.
func rewrite(tx *bolt.Tx, name string, fn func(*voterewards.Vote) error) error {
	var votes []voterewards.Vote
	if err := tx.Bucket([]byte(name)).ForEach(func(_, val []byte) error {
		v, err := decodeVote(val)
		votes = append(votes, v)
		return err
	}); err != nil {
		return err
	}
	// A new bucket, not Puts in the walk: bbolt cursors may skip a key after a Put.
	if err := tx.DeleteBucket([]byte(name)); err != nil {
		return err
	}
	b, err := tx.CreateBucket([]byte(name))
	if err != nil {
		return err
	}
	for _, v := range votes {
		if err := fn(&v); err != nil {
			return err
		}
		k := seenKey(v)
		if name == bucketExpiry {
			k = expiryKey(v)
		}
		if err := b.Put(k, encodeVote(v)); err != nil {
			return err
		}
	}
	return nil
}
