package redisstate

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestNewRefusesWhatFleetRefuses: New contacts no server, and refuses a nil
// client and a bot name fleet cannot use in its keys.
func TestNewRefusesWhatFleetRefuses(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = rdb.Close() })
	_, err := New(nil, "b")
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	_, err = New((*redis.Client)(nil), "b")
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	for _, bot := range []string{"", "a{b}", "a b"} {
		_, err = New(rdb, bot)
		require.ErrorAs(t, err, new(*topgg.ConfigError), bot)
	}
	s, err := New(rdb, "b")
	require.NoError(t, err)
	assert.Equal(t, fleet.Key("b", "votes:seen"), s.seen, "fleet's key space: an existing fleet's votes are kept")
}

// leaderWrites are the state's leader writes, each of one new vote.
func leaderWrites(s *State) map[string]func(context.Context) error {
	v := testVote(1)
	return map[string]func(context.Context) error{
		"Ingest with a checkpoint": func(ctx context.Context) error {
			_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
			return err
		},
		"Delivered": func(ctx context.Context) error { return s.Delivered(ctx, v, true) },
		"Expired":   func(ctx context.Context) error { return s.Expired(ctx, v) },
		"Prune":     func(ctx context.Context) error { return s.Prune(ctx, time.Now(), time.Now()) },
		"SaveHash":  func(ctx context.Context) error { return s.SaveHash(ctx, "h") },
		"Reminded":  func(ctx context.Context) error { return s.Reminded(ctx, "1", v.Key()) },
	}
}

// TestUseFenceFencesEveryLeaderWrite: before UseFence every leader write
// fails with fleet.ErrNoFence (reads and the writes of any process pass);
// UseFence takes a fence once, never nil; then each leader write is checked
// against the token the fence returns at that moment: the leader's passes,
// 0 is ErrNoFence, an older term's is ErrFenced.
func TestUseFenceFencesEveryLeaderWrite(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := newClient(t, srv.Addr())
	lease := runLease(t, rdb, "usefence")
	require.Eventually(t, func() bool { return lease.State().Leader }, 10*time.Second, time.Millisecond)
	s, err := New(rdb, "usefence")
	require.NoError(t, err)

	for name, write := range leaderWrites(s) {
		require.ErrorIs(t, write(ctx), fleet.ErrNoFence, "%s before UseFence", name)
	}
	_, err = s.Ingest(ctx, nil, []voterewards.Vote{testVote(2)}, voterewards.DefaultStreakGrace)
	require.NoError(t, err, "a webhook vote needs no fence")
	require.NoError(t, s.SetReminder(ctx, "1", true), "an opt-in needs no fence")
	_, err = s.Load(ctx)
	require.NoError(t, err)

	require.ErrorIs(t, s.UseFence(nil), voterewards.ErrNeedsFence)
	var token atomic.Int64
	require.NoError(t, s.UseFence(func() int64 { return token.Load() }))
	require.ErrorIs(t, s.UseFence(func() int64 { return lease.State().Token }), errFenceGiven)

	for name, write := range leaderWrites(s) {
		require.ErrorIs(t, write(ctx), fleet.ErrNoFence, "%s with token 0", name)
	}
	leading := lease.State().Token
	token.Store(leading)
	for name, write := range leaderWrites(s) {
		require.NoError(t, write(ctx), "%s with the leader's token", name)
	}
	token.Store(leading - 1)
	for name, write := range leaderWrites(s) {
		require.ErrorIs(t, write(ctx), fleet.ErrFenced, "%s with an older term's token", name)
	}
}

func TestHashSavedOnlyByTheNewestLeader(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	hash := strings.Repeat("ab", 32)
	a, lease := leadingState(t, srv, "hs")
	b, _ := startProcess(t, srv.Addr(), "hs")

	got, err := b.LoadHash(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "nothing saved yet")
	require.NoError(t, a.SaveHash(ctx, hash))
	got, err = b.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, hash, got, "a follower reads what the leader saved")
	require.ErrorIs(t, b.SaveHash(ctx, "follower"), fleet.ErrNoFence)

	// A newer term (as if another process won while a was paused): a's
	// SaveHash is refused although a still believes it leads.
	require.NoError(t, rdb.Incr(ctx, fleet.Key("hs", "fence")).Err())
	require.True(t, lease.State().Leader)
	require.ErrorIs(t, a.SaveHash(ctx, "stale"), fleet.ErrFenced)
	got, err = a.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, hash, got)
}

// TestRemindersOptInAnywhereRecordFencedByTheLeader: any process sets a
// choice; only the current leader records a reminder (a follower gets
// fleet.ErrNoFence, a stale leader fleet.ErrFenced), and only for a user still
// opted in; turning reminders on again keeps the record. The example bot's old
// set is read as opted in and moved to the hash on the next change.
func TestRemindersOptInAnywhereRecordFencedByTheLeader(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	ra, _ := leadingState(t, srv, "rm")
	rb, _ := startProcess(t, srv.Addr(), "rm")

	require.NoError(t, rb.SetReminder(ctx, "1", true), "a follower records an opt-in")
	require.NoError(t, ra.Reminded(ctx, "1", "1@k"))
	require.ErrorIs(t, rb.Reminded(ctx, "1", "1@other"), fleet.ErrNoFence)
	require.NoError(t, ra.Reminded(ctx, "2", "2@k"), "not opted in: nothing recorded")
	require.NoError(t, rb.SetReminder(ctx, "1", true))
	check := func(user string, wantOn bool, wantLast string) {
		t.Helper()
		on, last, err := rb.Reminder(ctx, user)
		require.NoError(t, err)
		assert.Equal(t, wantOn, on, user)
		assert.Equal(t, wantLast, last, user)
	}
	check("1", true, "1@k")
	check("2", false, "")

	require.NoError(t, rdb.SAdd(ctx, fleet.Key("rm", "set:reminders"), "3").Err())
	check("3", true, "")
	require.NoError(t, ra.Reminded(ctx, "3", "3@k"))
	check("3", true, "3@k")
	assert.False(t, rdb.SIsMember(ctx, fleet.Key("rm", "set:reminders"), "3").Val(), "moved to the hash")
	require.NoError(t, rdb.SAdd(ctx, fleet.Key("rm", "set:reminders"), "4").Err())
	require.NoError(t, rb.SetReminder(ctx, "4", false))
	check("4", false, "")

	require.NoError(t, rdb.Incr(ctx, fleet.Key("rm", "fence")).Err()) // a newer term
	require.ErrorIs(t, ra.Reminded(ctx, "1", "1@new"), fleet.ErrFenced)
	check("1", true, "1@k")
}

// TestStatePrintsByName: fmt of a State walked its Redis client's live state;
// under every verb it prints its name alone.
func TestStatePrintsByName(t *testing.T) {
	t.Parallel()
	rdb, err := fleet.NewUniversalClient("redis://:hunter2@127.0.0.1:1/0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := New(rdb, "b")
	require.NoError(t, err)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		assert.Equal(t, "redisstate.State", fmt.Sprintf(verb, s), verb)
	}
}
