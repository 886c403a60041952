package voterewards

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/dblkit/go-topgg/topgg"
)

// encodeV1 is the record format of round one.
func encodeV1(v topgg.Vote) []byte {
	b := make([]byte, 17)
	b[0] = codecV1
	putTime(b[1:9], v.CreatedAt)
	putTime(b[9:17], v.ExpiresAt)
	b = binary.AppendUvarint(b, uint64(v.Weight))
	b = appendString(b, v.UserID)
	return appendString(b, v.PlatformID)
}

// TestVersion1FileIsMigrated: a state file written by round one (votes keyed
// by user id, no per-voter index) opens with its state whole, and dedups
// across sources from then on.
func TestVersion1FileIsMigrated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	pendingV := topgg.Vote{UserID: "71", PlatformID: "31", Weight: 2, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(11 * time.Hour)}
	expiryV := topgg.Vote{UserID: "72", PlatformID: "32", Weight: 1, CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(10 * time.Hour)}
	db, err := bolt.Open(filepath.Join(dir, storeFile), 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		oldKey := func(v topgg.Vote) []byte {
			k := make([]byte, 8)
			putTime(k, v.CreatedAt)
			return append(k, v.UserID...)
		}
		oldExpiry := func(v topgg.Vote) []byte {
			k := make([]byte, 16)
			putTime(k, v.ExpiresAt)
			putTime(k[8:], v.CreatedAt)
			return append(k, v.UserID...)
		}
		meta, _ := tx.CreateBucket([]byte(bucketMeta))
		seen, _ := tx.CreateBucket([]byte(bucketSeen))
		pending, _ := tx.CreateBucket([]byte(bucketPending))
		expiry, _ := tx.CreateBucket([]byte(bucketExpiry))
		var ls [8]byte
		putTime(ls[:], now)
		for _, err := range []error{
			meta.Put([]byte(keyVersion), []byte{1}), meta.Put([]byte(keyCursor), []byte("c7")), meta.Put([]byte(keyLastSeen), ls[:]),
			seen.Put(oldKey(pendingV), encodeV1(pendingV)), seen.Put(oldKey(expiryV), encodeV1(expiryV)),
			pending.Put(oldKey(pendingV), encodeV1(pendingV)), expiry.Put(oldExpiry(expiryV), encodeV1(expiryV)),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())

	s, err := OpenStore(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "c7", snap.Checkpoint.Cursor)
	require.Len(t, snap.Pending, 1)
	assert.Equal(t, Vote{Vote: pendingV}.Key(), snap.Pending[0].Key())
	assert.Equal(t, OriginHistory, snap.Pending[0].Origin)
	assert.Equal(t, 2, snap.Pending[0].Weight)
	require.Len(t, snap.Expiries, 1)
	assert.Len(t, snap.Seen, 2)

	// Keyed by platform id now: delivery and expiry records find the votes.
	require.NoError(t, s.Delivered(ctx, snap.Pending[0], false))
	require.NoError(t, s.Expired(ctx, snap.Expiries[0]))
	// The per-voter index was built: a webhook record of a migrated vote
	// is a duplicate.
	hook := pendingV
	hook.UserID = ""
	hook.CreatedAt = hook.CreatedAt.Add(700 * time.Nanosecond)
	added, err := s.Ingest(ctx, nil, []Vote{{Vote: hook, Origin: OriginWebhook}}, DefaultStreakGrace)
	require.NoError(t, err)
	assert.Empty(t, added)
	snap, err = s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Pending)
	assert.Empty(t, snap.Expiries)
}
