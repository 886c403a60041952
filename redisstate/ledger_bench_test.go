package redisstate

import (
	"context"
	"testing"
	"time"

	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/voterewards"
)

// benchLedger returns a store whose ledger counts users voters, each with
// one to three votes this month (pages of 1,000 votes, unfenced ingest).
func benchLedger(b *testing.B, users int) *State {
	b.Helper()
	srv := redistest.Start(b)
	s, _ := leadingState(b, srv, "ledgerbench")
	base := time.Now().UTC()
	base = voterewards.MonthOf(base).Add(time.Hour)
	page := make([]voterewards.Vote, 0, 1000)
	flush := func() {
		if _, err := s.Ingest(context.Background(), nil, page, voterewards.DefaultStreakGrace); err != nil {
			b.Fatal(err)
		}
		page = page[:0]
	}
	for n := range 3 {
		for u := range users {
			if n > u%3 {
				continue
			}
			page = append(page, ledgerVote(u, base.Add(time.Duration(n)*12*time.Hour+time.Duration(u)*time.Millisecond), 1+u%2))
			if len(page) == cap(page) {
				flush()
			}
		}
	}
	flush()
	return s
}

// BenchmarkVoteLedger reads a ledger of 100,000 voters: Stats of one voter
// (one HGET), the top 10 of all time and of this month (one script each),
// beside a floor: one PING on the same client.
func BenchmarkVoteLedger(b *testing.B) {
	s := benchLedger(b, 100_000)
	ctx := context.Background()
	month := time.Now()
	b.Run("floor-ping", func(b *testing.B) {
		for b.Loop() {
			if err := s.rdb.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stats", func(b *testing.B) {
		user := ledgerVote(4242, time.Now(), 1).PlatformID
		for b.Loop() {
			if st, err := s.Stats(ctx, user); err != nil || st.Votes == 0 {
				b.Fatal(st, err)
			}
		}
	})
	for _, c := range []struct {
		name  string
		month time.Time
	}{{"top10-alltime", time.Time{}}, {"top10-month", month}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if top, err := s.Leaderboard(ctx, c.month, 10); err != nil || len(top) != 10 {
					b.Fatal(len(top), err)
				}
			}
		})
	}
}
