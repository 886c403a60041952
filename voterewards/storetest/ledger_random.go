package storetest

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/voterewards"
)

// streamSeed fixes the random stream, so that a failure replays.
const streamSeed = 20260301

// record is one source's record of a vote, with the vote it belongs to.
type record struct {
	v       voterewards.Vote
	real    int           // index of the vote in the stream's real votes
	arrival time.Duration // when it reaches the store, from the stream's start
}

// randomStream returns the records of several voters' votes over about
// two months (crossing month boundaries), in the order they reach the
// store: some votes seen twice (a webhook's and the history's record,
// either first), some late (the history delivering them days after newer
// votes). Records of one vote are at most 40 minutes apart and distinct
// votes of one voter at least 11 h 20 min, so the dedup rule sorts them
// without ambiguity.
func randomStream(rng *rand.Rand) []record {
	start := time.Date(2026, 2, 18, 6, 0, 0, 0, time.UTC)
	gaps := []int{1, 1, 1, 2, 2, 3, 3, 4, 7} // in 12 h slots: 3 is the streak's edge
	var recs []record
	real := 0
	for u := 1; u <= 6; u++ {
		slot := rng.IntN(10)
		for range 20 + rng.IntN(10) {
			slot += gaps[rng.IntN(len(gaps))]
			jitter := time.Duration(rng.Int64N(int64(20*time.Minute))) - 10*time.Minute
			v := lvote(u, start.Add(time.Duration(slot)*12*time.Hour+jitter), 1+rng.IntN(2))
			if u == 6 {
				v = userOnly(v)
			}
			recs = append(recs, record{v: v, real: real, arrival: arrival(rng, v.CreatedAt.Sub(start))})
			if rng.IntN(10) < 3 {
				dup := v
				dup.Origin = voterewards.OriginWebhook
				off := time.Duration(rng.Int64N(int64(40*time.Minute))) - 20*time.Minute
				dup.CreatedAt, dup.ExpiresAt = v.CreatedAt.Add(off), v.ExpiresAt.Add(off)
				recs = append(recs, record{v: dup, real: real, arrival: arrival(rng, dup.CreatedAt.Sub(start))})
			}
			real++
		}
	}
	slices.SortStableFunc(recs, func(a, b record) int { return int(a.arrival - b.arrival) })
	return recs
}

// arrival is when a record made at created reaches the store: at once,
// or (one in seven) up to five days late.
func arrival(rng *rand.Rand, created time.Duration) time.Duration {
	if rng.IntN(7) == 0 {
		return created + time.Duration(rng.Int64N(int64(5*24*time.Hour)))
	}
	return created
}

// testRandomStream feeds a random stream of records in batches and checks
// the store against the rule: the votes added are each vote's first
// record; each added vote's Stats, and every voter's Stats at the end, are
// Stats.Add folded over the added votes in order; every board is the sort
// of the standings those votes make.
func testRandomStream(t *testing.T, s voterewards.State) {
	rng := rand.New(rand.NewPCG(streamSeed, 1))
	recs := randomStream(rng)
	admitted := map[int]bool{}
	want := map[string]voterewards.Stats{}
	boards := map[time.Time]map[string]voterewards.Standing{}
	var late, dups, broken int // what the stream exercised
	for len(recs) > 0 {
		n := min(1+rng.IntN(4), len(recs))
		batch := recs[:n]
		recs = recs[n:]
		var in, expect []voterewards.Vote
		for _, r := range batch {
			in = append(in, r.v)
			if admitted[r.real] {
				dups++
			} else {
				admitted[r.real] = true
				expect = append(expect, r.v)
			}
		}
		added := ingest(t, s, nil, in...)
		require.Equal(t, keys(expect...), keys(added...), "the first record of each vote is added")
		for i, v := range expect {
			id := fold(v).UserID // the ledger's id: PlatformID, else UserID
			if want[id].Votes > 0 && v.CreatedAt.Before(want[id].LastVote) {
				late++
			} else if want[id].Votes > 0 && v.CreatedAt.After(want[id].StreakUntil) {
				broken++
			}
			want[id] = want[id].Add(v, grace)
			assertStats(t, want[id], added[i].Stats, "the Stats %s carries", v.Key())
			count(boards, time.Time{}, id, v)
			count(boards, voterewards.MonthOf(v.CreatedAt), id, v)
		}
	}
	require.Len(t, want, 6)
	require.True(t, late > 5 && dups > 5 && broken > 5, "the stream has late votes (%d), duplicates (%d) and broken streaks (%d)", late, dups, broken)
	for id, st := range want {
		assertStats(t, st, stats(t, s, id), "voter %s", id)
	}
	require.GreaterOrEqual(t, len(boards), 4, "all time and three months at least")
	for month, b := range boards {
		all := slices.SortedFunc(maps.Values(b), voterewards.CompareStandings)
		assertBoard(t, all, board(t, s, month, voterewards.MaxLeaderboard), "the board of %v", month)
		assertBoard(t, all[:min(3, len(all))], board(t, s, month, 3), "the top 3 of %v", month)
	}
}

// count adds v to voter id's standing on the board of month (zero: all
// time).
func count(boards map[time.Time]map[string]voterewards.Standing, month time.Time, id string, v voterewards.Vote) {
	if boards[month] == nil {
		boards[month] = map[string]voterewards.Standing{}
	}
	st := boards[month][id]
	st.UserID, st.Votes, st.Total = id, st.Votes+1, st.Total+max(v.Weight, 1)
	if v.CreatedAt.After(st.ReachedAt) {
		st.ReachedAt = v.CreatedAt
	}
	boards[month][id] = st
}
