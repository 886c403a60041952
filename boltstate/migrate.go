package boltstate

import (
	"bytes"
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
	case bytes.Equal(v, []byte{1}):
		if err := migrateV1(tx); err != nil {
			return fmt.Errorf("migrating from version 1: %w", err)
		}
		if err := migrateV2(tx); err != nil {
			return fmt.Errorf("migrating from version 2: %w", err)
		}
	case bytes.Equal(v, []byte{2}):
		if err := migrateV2(tx); err != nil {
			return fmt.Errorf("migrating from version 2: %w", err)
		}
	case !bytes.Equal(v, []byte{storeVersion}):
		return fmt.Errorf("unknown store version %v (written by a newer release?)", v)
	default:
		return nil
	}
	return meta.Put([]byte(keyVersion), []byte{storeVersion})
}

// migrateV1 re-keys a version 1 file (keyed by user id, no voter index).
func migrateV1(tx *bolt.Tx) error {
	for _, name := range []string{bucketSeen, bucketPending, bucketExpiry} {
		b := tx.Bucket([]byte(name))
		var votes []voterewards.Vote
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
				if err := tx.Bucket([]byte(bucketVoters)).Put(voterKey(voter(v), v.CreatedAt), nil); err != nil {
					return err
				}
			}
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
	err := tx.Bucket([]byte(bucketSeen)).ForEach(func(_, val []byte) error {
		v, err := decodeVote(val)
		if err != nil {
			return err
		}
		st, err := ledger.count(v, voterewards.DefaultStreakGrace)
		counted[v.Key()] = st
		return err
	})
	if err != nil {
		return err
	}
	for _, name := range []string{bucketSeen, bucketPending, bucketExpiry} {
		if err := restat(tx.Bucket([]byte(name)), counted); err != nil {
			return err
		}
	}
	return nil
}

// restat rewrites b's vote records with their Stats from counted.
func restat(b *bolt.Bucket, counted map[string]voterewards.Stats) error {
	var keys, vals [][]byte
	if err := b.ForEach(func(k, val []byte) error {
		v, err := decodeVote(val)
		v.Stats = counted[v.Key()]
		keys, vals = append(keys, bytes.Clone(k)), append(vals, encodeVote(v))
		return err
	}); err != nil {
		return err
	}
	// Written after the walk: bbolt cursors may skip a key after a Put.
	for i, k := range keys {
		if err := b.Put(k, vals[i]); err != nil {
			return err
		}
	}
	return nil
}
