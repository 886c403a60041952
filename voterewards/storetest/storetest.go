// Package storetest is the shared test suite of [voterewards.State]: every
// promise of [voterewards.Store] (and of [voterewards.Feed], when the store
// implements it), the cross-source dedup rule, concurrency, the command hash,
// the reminder opt-ins ([voterewards.ReminderStore]), and the ledger:
// its edge cases one by one, and a seeded random stream of votes whose Stats
// and leaderboards must be exactly those of [voterewards.Stats.Add] folded
// over the votes the store added (so a store that re-implements the rule, in
// Lua or SQL, is checked against the Go one). Run it from a store's tests:
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) voterewards.State { return openMyStore(t) })
//	}
//
// open must return a new, empty store for each call, closed by the caller's
// t.Cleanup. The suite uses the interfaces only, so it runs unchanged against
// any implementation (memory, boltstate, Redis, PostgreSQL). The suite's
// votes are in 2026 and need nanosecond times kept.
package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// Run runs the suite, each case on a store of its own from open.
func Run(t *testing.T, open func(t *testing.T) voterewards.State) {
	t.Helper()
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, s voterewards.State)
	}{
		{"EmptyLoadThenCheckpoint", testCheckpoint},
		{"VotesComeBackAsTheyWentIn", testRoundTrip},
		{"DuplicatesInOneCallAndAcross", testDuplicates},
		{"CrossSourceDedupCountedOnce", testCrossSource},
		{"DedupWindowBoundary", testDedupBoundary},
		{"DedupAgainstStoredVotesOnly", testDedupChain},
		{"DeliveredAndExpired", testDeliveredAndExpired},
		{"PruneKeepsLedger", testPrune},
		{"UnusualVoterIDs", testUnusualIDs},
		{"CancelledContext", testCancelled},
		{"ConcurrentDuplicates", testConcurrentDuplicates},
		{"ConcurrentDistinct", testConcurrentDistinct},
		{"Feed", testFeed},
		{"LedgerStreakEdge", testStreakEdge},
		{"LedgerWeekendWeight", testWeekendWeight},
		{"LedgerLateVote", testLateVote},
		{"LedgerLateVotesOfPastMonths", testLateVotesOfPastMonths},
		{"LedgerMonthBoundary", testMonthBoundary},
		{"LedgerLeaderboardOrderAndBounds", testLeaderboardOrder},
		{"LedgerLeaderboardMonths", testLeaderboardMonths},
		{"LedgerUnknownUser", testUnknownUser},
		{"LedgerStatsKeptWithVotes", testStatsKept},
		{"LedgerConcurrentVotesOfOneUser", testLedgerConcurrentOneUser},
		{"LedgerRandomStreamMatchesTheRule", testRandomStream},
		{"CommandHash", testHash},
		{"ReminderOptIns", testReminders},
		{"ReminderConcurrentUsers", testRemindersConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open(t)) })
	}
}

// base is the suite's fixed time: stores must not depend on the wall clock.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// vote makes a sanitized vote of voter u created at created, from origin.
func vote(u int, created time.Time, origin voterewards.Origin) voterewards.Vote {
	tv := topgg.Vote{
		UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u), Weight: 1 + u%2,
		CreatedAt: created.UTC().Round(0), ExpiresAt: created.UTC().Round(0).Add(voterewards.VoteLifetime),
	}
	return voterewards.Vote{Vote: tv, Origin: origin}
}

func keys(votes ...voterewards.Vote) []string {
	out := []string{}
	for _, v := range votes {
		out = append(out, v.Key())
	}
	return out
}

func load(t *testing.T, s voterewards.Store) *voterewards.Snapshot {
	t.Helper()
	snap, err := s.Load(context.Background())
	require.NoError(t, err)
	return snap
}

func ingest(t *testing.T, s voterewards.Store, cp *voterewards.Checkpoint, votes ...voterewards.Vote) []voterewards.Vote {
	t.Helper()
	added, err := s.Ingest(context.Background(), cp, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	return added
}

func testCheckpoint(t *testing.T, s voterewards.State) {
	snap := load(t, s)
	assert.Zero(t, snap.Checkpoint, "a new store loads empty")
	assert.Empty(t, slices.Concat(snap.Seen, snap.Pending, snap.Expiries))
	cp := voterewards.Checkpoint{Cursor: "c1", LastSeen: base, Since: base.Add(-24 * time.Hour)}
	ingest(t, s, &cp, vote(1, base, voterewards.OriginHistory))
	got := load(t, s).Checkpoint
	got.LastSeen, got.Since = got.LastSeen.UTC(), got.Since.UTC()
	assert.Equal(t, cp, got)

	ingest(t, s, nil, vote(2, base, voterewards.OriginWebhook))
	assert.Equal(t, "c1", load(t, s).Checkpoint.Cursor, "a nil checkpoint leaves the saved one")

	cp2 := voterewards.Checkpoint{Cursor: "c2", LastSeen: base.Add(time.Minute), Since: cp.Since}
	ingest(t, s, &cp2)
	assert.Equal(t, "c2", load(t, s).Checkpoint.Cursor, "a checkpoint is saved without votes too")
}

func testRoundTrip(t *testing.T, s voterewards.State) {
	hook := vote(1, base, voterewards.OriginWebhook)
	hook.Hook = &voterewards.Hook{ID: "808499215864008704", Query: map[string]string{"ref": "abc", "x": ""}}
	v0 := vote(2, base, voterewards.OriginWebhookV0)
	v0.UserID = "" // v0 webhooks know the platform id only
	only := userOnly(vote(3, base, voterewards.OriginHistory))
	added := ingest(t, s, nil, hook, v0, only)
	require.Len(t, added, 3)
	snap := load(t, s)
	byKey := map[string]voterewards.Vote{}
	for _, v := range snap.Pending {
		byKey[v.Key()] = v
	}
	for _, want := range []voterewards.Vote{hook, v0, only} {
		got, ok := byKey[want.Key()]
		require.True(t, ok, "vote %s not pending", want.Key())
		got.CreatedAt, got.ExpiresAt, got.Stats = got.CreatedAt.UTC(), got.ExpiresAt.UTC(), want.Stats // Stats: testStatsKept
		assert.Equal(t, want, got)
	}
	assert.ElementsMatch(t, keys(snap.Pending...), keys(snap.Seen...))
}

func testDuplicates(t *testing.T, s voterewards.State) {
	a, b := vote(1, base, voterewards.OriginHistory), vote(2, base, voterewards.OriginHistory)
	assert.Equal(t, keys(a, b), keys(ingest(t, s, nil, a, a, b)...), "a repeat inside one call is dropped")
	assert.Empty(t, ingest(t, s, nil, b, a), "votes stored before are dropped")
	next := vote(1, base.Add(voterewards.VoteLifetime), voterewards.OriginHistory)
	assert.Equal(t, keys(next), keys(ingest(t, s, nil, next)...), "the same user's next vote, 12 h later, is a new vote")
	assert.Len(t, load(t, s).Pending, 3)
}

// testCrossSource stores the records that the three sources give of one
// vote, as they are on the wire, in either order: only the first is a vote,
// counted once in the ledger.
func testCrossSource(t *testing.T, s voterewards.State) {
	created := base.Add(14251 * time.Microsecond) // the history's 6 digits
	history := vote(1, created, voterewards.OriginHistory)
	hook := vote(1, created.Add(900*time.Nanosecond), voterewards.OriginWebhook) // 7 digits, one more
	hook.Hook = &voterewards.Hook{ID: "808499215864008704"}
	hook.UserID = ""                                                       // not needed to match
	v0 := vote(1, created.Add(3*time.Second), voterewards.OriginWebhookV0) // receipt time
	v0.UserID = ""

	require.Equal(t, keys(hook), keys(ingest(t, s, nil, hook)...))
	assert.Empty(t, ingest(t, s, &voterewards.Checkpoint{Cursor: "c"}, history), "the poll's record of a webhook vote")
	assert.Empty(t, ingest(t, s, nil, v0), "the v0 record of it")
	assert.Empty(t, ingest(t, s, nil, hook), "a replayed delivery")
	snap := load(t, s)
	require.Len(t, snap.Pending, 1)
	assert.Equal(t, voterewards.OriginWebhook, snap.Pending[0].Origin, "the first record is the vote")
	assertStats(t, fold(hook), stats(t, s, voter(1)), "one vote, counted once")
	standing := []voterewards.Standing{{UserID: voter(1), Votes: 1, Total: 2, ReachedAt: hook.CreatedAt}}
	assertBoard(t, standing, board(t, s, time.Time{}, 10), "all time")
	assertBoard(t, standing, board(t, s, base, 10), "this month")

	history, hook = lvote(2, created, 2), lvote(2, created.Add(900*time.Nanosecond), 2)
	hook.Origin = voterewards.OriginWebhook
	require.Len(t, ingest(t, s, nil, history, history), 1, "a record twice in one call")
	assert.Empty(t, ingest(t, s, nil, history), "the same record again")
	assert.Empty(t, ingest(t, s, nil, hook), "the webhook's record after the history's")
	first := lvote(3, base, 1)
	first.Origin = voterewards.OriginWebhookV0
	require.Len(t, ingest(t, s, nil, first), 1)
	assert.Empty(t, ingest(t, s, nil, lvote(3, base.Add(-3*time.Second), 1)), "the history's record after a v0 webhook's")
	assertStats(t, fold(history), stats(t, s, voter(2)), "the history's record first: counted once")
	assert.Equal(t, 1, stats(t, s, voter(3)).Votes, "the v0 record first: counted once")
}

func testDedupBoundary(t *testing.T, s voterewards.State) {
	first := vote(1, base, voterewards.OriginHistory)
	ingest(t, s, nil, first)
	w := voterewards.DedupWindow
	for _, d := range []time.Duration{w - 1, -(w - 1)} {
		assert.Empty(t, ingest(t, s, nil, vote(1, base.Add(d), voterewards.OriginHistory)), "%s apart: one vote", d)
	}
	for _, d := range []time.Duration{w, -w} {
		assert.Len(t, ingest(t, s, nil, vote(1, base.Add(d), voterewards.OriginHistory)), 1, "%s apart: two votes", d)
	}
	assert.Len(t, ingest(t, s, nil, vote(2, base, voterewards.OriginHistory)), 1, "another voter at the same instant")
}

// testDedupChain: a record is a duplicate of the votes stored, never of a
// record dropped as a duplicate, in one call or across calls, in any order.
func testDedupChain(t *testing.T, s voterewards.State) {
	half := voterewards.VoteLifetime / 2
	at := func(u int, d time.Duration) voterewards.Vote { return vote(u, base.Add(d), voterewards.OriginHistory) }
	a, b, c := at(1, 0), at(1, half), at(1, 2*half)
	assert.Equal(t, keys(a, c), keys(ingest(t, s, nil, a, b, c)...), "in one call, oldest first")
	a, b, c = at(2, 0), at(2, half), at(2, 2*half)
	assert.Equal(t, keys(c, a), keys(ingest(t, s, nil, c, b, a)...), "in one call, newest first")
	a, b, c = at(3, 0), at(3, half), at(3, 2*half)
	ingest(t, s, nil, a)
	assert.Empty(t, ingest(t, s, nil, b))
	assert.Equal(t, keys(c), keys(ingest(t, s, nil, c)...), "across calls")
	for u := 1; u <= 3; u++ {
		assert.Equal(t, 2, stats(t, s, voter(u)).Votes, "voter %d", u)
	}
}

func testDeliveredAndExpired(t *testing.T, s voterewards.State) {
	ctx := context.Background()
	a, b, c := vote(1, base, voterewards.OriginHistory), vote(2, base, voterewards.OriginHistory), vote(3, base, voterewards.OriginHistory)
	ingest(t, s, nil, a, b, c)
	require.NoError(t, s.Delivered(ctx, a, true))
	require.NoError(t, s.Delivered(ctx, b, false))
	snap := load(t, s)
	assert.Equal(t, keys(c), keys(snap.Pending...))
	assert.Equal(t, keys(a), keys(snap.Expiries...))
	assert.Len(t, snap.Seen, 3, "delivered votes stay in the dedup set")
	assert.Empty(t, ingest(t, s, nil, a), "a delivered vote is still a duplicate")
	require.NoError(t, s.Expired(ctx, a))
	assert.Empty(t, load(t, s).Expiries)
	require.NoError(t, s.Delivered(ctx, a, false), "recording again is harmless")
	require.NoError(t, s.Expired(ctx, a))
	assert.Equal(t, keys(c), keys(load(t, s).Pending...))
}

// testPrune: what is before the cut and expired leaves the dedup set, and
// only it: pending deliveries and expiries and the ledger stay.
func testPrune(t *testing.T, s voterewards.State) {
	ctx := context.Background()
	now := base
	old := vote(1, now.Add(-13*time.Hour), voterewards.OriginHistory) // expired an hour ago
	mid := vote(2, now.Add(-2*time.Hour), voterewards.OriginHistory)  // active
	recent := vote(3, now.Add(-time.Minute), voterewards.OriginHistory)
	ingest(t, s, nil, old, mid, recent)
	require.NoError(t, s.Delivered(ctx, old, true))
	ledger, allTime, month := stats(t, s, voter(1)), board(t, s, time.Time{}, 10), board(t, s, old.CreatedAt, 10)
	require.NoError(t, s.Prune(ctx, now.Add(-30*time.Minute), now))
	snap := load(t, s)
	assert.ElementsMatch(t, keys(mid, recent), keys(snap.Seen...), "only what is before the cut and expired goes")
	assert.Equal(t, keys(old), keys(snap.Expiries...), "pending expiries are left alone")
	assert.ElementsMatch(t, keys(mid, recent), keys(snap.Pending...))
	assertStats(t, ledger, stats(t, s, voter(1)), "the pruned vote's voter keeps the ledger")
	assertBoard(t, allTime, board(t, s, time.Time{}, 10))
	assertBoard(t, month, board(t, s, old.CreatedAt, 10), "the pruned vote's month")
	assert.Len(t, ingest(t, s, nil, old), 1, "a pruned vote no longer dedups")
	assert.Empty(t, ingest(t, s, nil, mid), "a kept one still does")
}

// testUnusualIDs stores votes of voters whose ids are what the pipeline lets
// through at its bounds (1 KiB, any printable UTF-8, separators, braces, one
// id the prefix of another): each is its own voter, deduplicated, counted,
// delivered and expired by its own key, and comes back byte for byte.
func testUnusualIDs(t *testing.T, s voterewards.State) {
	ctx := context.Background()
	long := strings.Repeat("é", 512)             // 1024 bytes, the longest id taken
	odd := "{bot}:a,b \"q\" \\ %d *?[] \u2060👍🏽" // quotes, backslash, Lua pattern characters, a format character
	ids := []string{long, long[:1020] + "@x:y", odd, odd + "1", "1:2", "1", "1@2026-03-01T12:00:00Z"}
	var votes []voterewards.Vote
	for i, id := range ids {
		v := vote(i, base, voterewards.OriginWebhookV0)
		v.PlatformID, v.UserID = id, ""
		if i%2 == 0 {
			v.PlatformID, v.UserID = "", id // a voter known by its user id alone
		}
		votes = append(votes, v)
	}
	require.Equal(t, keys(votes...), keys(ingest(t, s, nil, votes...)...), "one vote per id, at the same instant")
	assert.Empty(t, ingest(t, s, nil, votes...), "each a duplicate of itself only")
	byKey := map[string]voterewards.Vote{}
	for _, v := range load(t, s).Pending {
		byKey[v.Key()] = v
	}
	for _, want := range votes {
		got, ok := byKey[want.Key()]
		if assert.True(t, ok, "vote of id %q not pending", want.Key()) {
			assert.Equal(t, want.UserID, got.UserID)
			assert.Equal(t, want.PlatformID, got.PlatformID)
		}
	}
	for _, id := range ids {
		assert.Equal(t, 1, stats(t, s, id).Votes, "id %q counted once", id)
	}
	top := board(t, s, time.Time{}, voterewards.MaxLeaderboard)
	got := []string{}
	for _, st := range top {
		got = append(got, st.UserID)
	}
	assert.ElementsMatch(t, ids, got, "the leaderboard names each id as given")

	require.NoError(t, s.Delivered(ctx, votes[2], true))
	snap := load(t, s)
	assert.ElementsMatch(t, keys(slices.Delete(slices.Clone(votes), 2, 3)...), keys(snap.Pending...), "Delivered removed that vote only")
	require.Equal(t, keys(votes[2]), keys(snap.Expiries...))
	require.NoError(t, s.Expired(ctx, votes[2]))
	assert.Empty(t, load(t, s).Expiries, "Expired found it by its key")
}

// testCancelled: every call with a done context fails and changes nothing.
func testCancelled(t *testing.T, s voterewards.State) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	u := voter(1)
	require.NoError(t, s.SaveHash(context.Background(), fingerprint("a")))
	require.NoError(t, s.SetReminder(context.Background(), u, true))
	_, err := s.Ingest(ctx, nil, []voterewards.Vote{vote(1, base, voterewards.OriginHistory)}, voterewards.DefaultStreakGrace)
	require.Error(t, err, "Ingest with a done context")
	_, err = s.Stats(ctx, u)
	assert.Error(t, err, "Stats with a done context")
	assert.Error(t, s.SaveHash(ctx, fingerprint("b")), "SaveHash with a done context")
	_, err = s.LoadHash(ctx)
	assert.Error(t, err, "LoadHash with a done context")
	assert.Error(t, s.SetReminder(ctx, u, false), "SetReminder with a done context")
	assert.Error(t, s.Reminded(ctx, u, "k1"), "Reminded with a done context")
	_, _, err = s.Reminder(ctx, u)
	assert.Error(t, err, "Reminder with a done context")

	assert.Empty(t, load(t, s).Seen, "a failed Ingest stores nothing")
	assert.Zero(t, stats(t, s, u).Votes, "a failed Ingest counts nothing")
	assert.Equal(t, fingerprint("a"), loadHash(t, s), "a failed save changes nothing")
	requireReminder(t, s, u, true, "", "failed reminder calls change nothing")
}

// testConcurrentDuplicates races the records of one vote from many callers:
// exactly one is added, whichever, and counted once.
func testConcurrentDuplicates(t *testing.T, s voterewards.State) {
	const callers = 32
	var added atomic.Int32
	atOnce(callers, func(i int) {
		v := lvote(1, base.Add(time.Duration(i)*time.Second), 2)
		v.Origin = voterewards.Origin(1 + i%3)
		got, err := s.Ingest(context.Background(), nil, []voterewards.Vote{v}, grace)
		assert.NoError(t, err)
		added.Add(int32(len(got)))
	})
	assert.Equal(t, int32(1), added.Load())
	assert.Len(t, load(t, s).Pending, 1)
	assert.Equal(t, counts{votes: 1, total: 2, streak: 1, best: 1, monthVotes: 1, monthTotal: 2}, countsOf(stats(t, s, voter(1))))
	assert.Len(t, board(t, s, time.Time{}, 10), 1)
}

// testConcurrentDistinct stores distinct votes from many callers at once,
// with deliveries recorded meanwhile: none is lost.
func testConcurrentDistinct(t *testing.T, s voterewards.State) {
	const callers, each = 16, 24
	atOnce(callers, func(c int) {
		for i := range each {
			v := vote(c*each+i, base.Add(time.Duration(i)*time.Millisecond), voterewards.OriginWebhook)
			got, err := s.Ingest(context.Background(), nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
			if assert.NoError(t, err) && assert.Len(t, got, 1) && i%2 == 0 {
				assert.NoError(t, s.Delivered(context.Background(), v, false))
			}
		}
	})
	snap := load(t, s)
	assert.Equal(t, callers*each, len(snap.Seen))
	assert.Equal(t, callers*each/2, len(snap.Pending))
}

// testFeed checks the Feed contract when the store implements it: resync
// once listening, then every vote added by any caller, once.
func testFeed(t *testing.T, s voterewards.State) {
	feed, ok := s.(voterewards.Feed)
	if !ok {
		t.Skip("the store does not implement voterewards.Feed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	got, resyncs, done := make(chan string, 8), make(chan struct{}, 8), make(chan error, 1)
	go func() {
		done <- feed.Follow(ctx, func(v voterewards.Vote) { got <- v.Key() }, func() { resyncs <- struct{}{} })
	}()
	receive(t, resyncs, "Follow did not resync once listening")
	a, b := vote(1, base, voterewards.OriginWebhook), vote(2, base, voterewards.OriginHistory)
	ingest(t, s, nil, a)
	ingest(t, s, &voterewards.Checkpoint{Cursor: "c"}, b, a)
	ingest(t, s, nil, a)
	first, second := receive(t, got, "added votes reported within moments"), receive(t, got, "added votes reported within moments")
	assert.Equal(t, keys(a, b), []string{first, second}, "each added vote, in order")
	cancel()
	require.NoError(t, receive(t, done, "Follow did not return after its context ended"), "Follow returns nil when its context ends")
	assert.Empty(t, got, "each added vote once; duplicates not reported")
}

// atOnce runs f(0) to f(n-1) concurrently and returns once all returned.
func atOnce(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// receive returns what ch gives within 5 seconds, or fails the test with msg.
func receive[T any](t *testing.T, ch <-chan T, msg string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal(msg)
		panic("unreachable")
	}
}

// The suite's cases of the rest of a bot's state: the command hash and the
// reminder opt-ins. (The fence is each storage's own: its tests check it.)

// fingerprint is a command hash as commands computes them: sha256, in hex.
func fingerprint(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func loadHash(t *testing.T, s voterewards.State) string {
	t.Helper()
	h, err := s.LoadHash(context.Background())
	require.NoError(t, err)
	return h
}

func testHash(t *testing.T, s voterewards.State) {
	assert.Empty(t, loadHash(t, s), "none saved yet")
	require.NoError(t, s.SaveHash(context.Background(), fingerprint("a")))
	assert.Equal(t, fingerprint("a"), loadHash(t, s))
	require.NoError(t, s.SaveHash(context.Background(), fingerprint("b")))
	assert.Equal(t, fingerprint("b"), loadHash(t, s), "a save replaces the hash")
}

// requireReminder checks the user's opt-in and last reminded vote.
func requireReminder(t *testing.T, s voterewards.State, user string, on bool, last string, msg string) {
	t.Helper()
	gotOn, gotLast, err := s.Reminder(context.Background(), user)
	require.NoError(t, err)
	assert.Equal(t, on, gotOn, "%s: on", msg)
	assert.Equal(t, last, gotLast, "%s: last", msg)
}

func testReminders(t *testing.T, s voterewards.State) {
	ctx := context.Background()
	u, other := voter(1), voter(2)
	requireReminder(t, s, u, false, "", "off by default")
	require.NoError(t, s.Reminded(ctx, u, "k0"))
	requireReminder(t, s, u, false, "", "Reminded records nothing for a user who is off")
	require.NoError(t, s.SetReminder(ctx, u, true))
	requireReminder(t, s, u, true, "", "on, never reminded")
	require.NoError(t, s.Reminded(ctx, u, "k1"))
	requireReminder(t, s, u, true, "k1", "Reminded records the vote")
	require.NoError(t, s.SetReminder(ctx, u, true))
	requireReminder(t, s, u, true, "k1", "on again keeps the last vote reminded")
	requireReminder(t, s, other, false, "", "another user is untouched")
	require.NoError(t, s.SetReminder(ctx, u, false))
	requireReminder(t, s, u, false, "", "off")
	require.NoError(t, s.SetReminder(ctx, u, false), "off again")
	require.NoError(t, s.Reminded(ctx, u, "k2"))
	require.NoError(t, s.SetReminder(ctx, u, true))
	requireReminder(t, s, u, true, "", "what came while off was not recorded")
}

// testRemindersConcurrent opts many users in at once, each then reminded:
// none is lost.
func testRemindersConcurrent(t *testing.T, s voterewards.State) {
	const users = 32
	atOnce(users, func(i int) {
		u := voter(i)
		if assert.NoError(t, s.SetReminder(context.Background(), u, true)) {
			assert.NoError(t, s.Reminded(context.Background(), u, "k"+u))
		}
	})
	for i := range users {
		requireReminder(t, s, voter(i), true, "k"+voter(i), voter(i))
	}
}
