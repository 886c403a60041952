package boltstate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// benchVoters is the size of the ledger benchmarks' population.
const benchVoters = 100_000

// fillLedger ingests 1 to 3 votes (a day apart, weights 1 and 2) for each
// of benchVoters voters, all in March 2026: about 200,000 votes.
func fillLedger(b *testing.B, s voterewards.Store) {
	b.Helper()
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var batch []voterewards.Vote
	flush := func() {
		if _, err := s.Ingest(ctx, &voterewards.Checkpoint{}, batch, voterewards.DefaultStreakGrace); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	for u := range benchVoters {
		for k := range 1 + u%3 {
			created := base.Add(time.Duration(k)*24*time.Hour + time.Duration(u)*time.Millisecond)
			batch = append(batch, newVote(topgg.Vote{UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u),
				Weight: 1 + (u+k)%2, CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime)}))
		}
		if len(batch) >= 2000 {
			flush()
		}
	}
	flush()
}

// filledStore returns a "bolt" or "memory" store filled by fillLedger.
func filledStore(b *testing.B, name string) voterewards.Store {
	b.Helper()
	var s voterewards.Store = voterewards.NewMemoryStore()
	if name == "bolt" {
		s = openNoSync(b)
	}
	fillLedger(b, s)
	return s
}

// BenchmarkLeaderboard measures the top 10 of 100,000 voters, all time and
// of a month (the goal: under 50 ms on bbolt). The memory store sorts the
// whole board on each call.
func BenchmarkLeaderboard(b *testing.B) {
	for _, name := range []string{"bolt", "memory"} {
		b.Run(name, func(b *testing.B) {
			s := filledStore(b, name)
			for _, span := range []struct {
				name  string
				month time.Time
			}{{"all-time", time.Time{}}, {"month", time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)}} {
				b.Run(span.name, func(b *testing.B) {
					ctx := context.Background()
					b.ReportAllocs()
					for b.Loop() {
						top, err := s.Leaderboard(ctx, span.month, 10)
						if err != nil || len(top) != 10 {
							b.Fatal(err, len(top))
						}
					}
				})
			}
		})
	}
}

// BenchmarkStats measures one voter's Stats among 100,000 (the goal: under
// 1 ms on bbolt).
func BenchmarkStats(b *testing.B) {
	for _, name := range []string{"bolt", "memory"} {
		b.Run(name, func(b *testing.B) {
			s := filledStore(b, name)
			ids := make([]string, 1024)
			for i := range ids {
				ids[i] = fmt.Sprintf("3%017d", (i*7919)%benchVoters)
			}
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				st, err := s.Stats(ctx, ids[i%len(ids)])
				if err != nil || st.Votes == 0 {
					b.Fatal(err, st)
				}
				i++
			}
		})
	}
}
