package boltstate

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/dblkit/go-topgg/voterewards"
)

// prepareBuckets creates the buckets of a new file and migrates an old one.
func prepareBuckets(tx *bolt.Tx) error {
	for _, name := range []string{bucketMeta, bucketSeen, bucketVoters, bucketPending, bucketExpiry, bucketLedger, bucketMonths, bucketBoard,
		bucketCommands, bucketReminders} {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return err
		}
	}
	meta := tx.Bucket([]byte(bucketMeta))
	switch v := meta.Get([]byte(keyVersion)); {
	case v == nil: // a new file
	case len(v) != 1 || v[0] < 1 || v[0] > storeVersion:
		return fmt.Errorf("unknown store version %v (written by a newer release?)", v)
	case v[0] == storeVersion:
		return nil
	default:
		steps := []func(*bolt.Tx) error{migrateV1, migrateV2} // from version 1, 2
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
