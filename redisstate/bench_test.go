package redisstate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// benchVote is vote n of a stream of one vote a second among 50,000 users
// (a user votes every 13.9 h, so no vote is a duplicate).
func benchVote(n int, base time.Time) voterewards.Vote {
	u := n % 50_000
	created := base.Add(time.Duration(n) * time.Second).UTC()
	tv := topgg.Vote{UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u), Weight: 1,
		CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime)}
	return voterewards.Vote{Vote: tv, Origin: voterewards.OriginHistory}
}

// voteStores are the stores compared: Redis (AOF, fsync on every write, as
// redistest runs it) and bbolt (fsync on every commit), both durable when
// Ingest returns.
func voteStores(b *testing.B) []struct {
	name string
	open func(b *testing.B) voterewards.Store
} {
	srv := redistest.Start(b)
	var n atomic.Int32
	return []struct {
		name string
		open func(b *testing.B) voterewards.Store
	}{
		{"redis", func(b *testing.B) voterewards.Store {
			s, _ := leadingState(b, srv, fmt.Sprintf("bench%d", n.Add(1)))
			return s
		}},
		{"bolt", func(b *testing.B) voterewards.Store {
			s, err := boltstate.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
}

// scriptUsec returns the microseconds Redis spent running scripts so far
// (INFO commandstats, eval and evalsha), 0 for a store that is not Redis's:
// the server's share of an ingest, which other load on the machine changes
// less than the wall time.
func scriptUsec(b *testing.B, s voterewards.Store) int64 {
	vs, ok := s.(*State)
	if !ok {
		return 0
	}
	info, err := vs.rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for line := range strings.Lines(info) {
		if !strings.HasPrefix(line, "cmdstat_eval:") && !strings.HasPrefix(line, "cmdstat_evalsha:") {
			continue
		}
		for field := range strings.SplitSeq(strings.TrimSpace(line[strings.IndexByte(line, ':')+1:]), ",") {
			if v, ok := strings.CutPrefix(field, "usec="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				total += n
			}
		}
	}
	return total
}

// BenchmarkVoteStoreIngestPages is the leader's poll: pages of 100 votes,
// each page one Ingest with its checkpoint (fenced in Redis). One op is one
// vote.
func BenchmarkVoteStoreIngestPages(b *testing.B) {
	for _, st := range voteStores(b) {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			base := time.Now().Add(-60 * 24 * time.Hour)
			pages := (b.N + 99) / 100
			page := make([]voterewards.Vote, 100)
			b.ReportAllocs()
			usec := scriptUsec(b, s)
			b.ResetTimer()
			for p := range pages {
				for i := range page {
					page[i] = benchVote(p*100+i, base)
				}
				cp := voterewards.Checkpoint{Cursor: fmt.Sprint(p), LastSeen: page[99].CreatedAt, Since: base}
				added, err := s.Ingest(context.Background(), &cp, page, voterewards.DefaultStreakGrace)
				if err != nil || len(added) != len(page) {
					b.Fatalf("ingest: %d added, %v", len(added), err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(pages*100)/b.Elapsed().Seconds(), "votes/s")
			if usec > 0 {
				b.ReportMetric(float64(scriptUsec(b, s)-usec)/float64(pages*100), "redis-us/vote")
			}
		})
	}
}

// BenchmarkVoteStoreIngestWebhooks is webhook receivers: one vote per
// Ingest, 64 concurrent callers per CPU. One op is one vote.
func BenchmarkVoteStoreIngestWebhooks(b *testing.B) {
	for _, st := range voteStores(b) {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			base := time.Now().Add(-60 * 24 * time.Hour)
			var next atomic.Int64
			b.SetParallelism(64)
			b.ReportAllocs()
			usec := scriptUsec(b, s)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					v := benchVote(int(next.Add(1)), base)
					v.Origin = voterewards.OriginWebhook
					if _, err := s.Ingest(context.Background(), nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "votes/s")
			if usec > 0 {
				b.ReportMetric(float64(scriptUsec(b, s)-usec)/float64(b.N), "redis-us/vote")
			}
		})
	}
}

// BenchmarkVoteFeedLatency is the time from one process's Ingest call to
// another process's feed callback (pub/sub), what Active in every process
// and the leader's delivery wait for. ns/op is that latency.
func BenchmarkVoteFeedLatency(b *testing.B) {
	srv := redistest.Start(b)
	writer, _ := leadingState(b, srv, "feedbench")
	reader, err := New(newClient(b, srv.Addr()), "feedbench")
	if err != nil {
		b.Fatal(err)
	}
	got := make(chan struct{}, 1)
	listening := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- reader.Follow(ctx, func(voterewards.Vote) { got <- struct{}{} }, func() {
			select {
			case listening <- struct{}{}:
			default:
			}
		})
	}()
	b.Cleanup(func() { cancel(); <-done })
	<-listening
	base := time.Now().Add(-60 * 24 * time.Hour)
	b.ResetTimer()
	for n := range b.N {
		if _, err := writer.Ingest(context.Background(), nil, []voterewards.Vote{benchVote(n, base)}, voterewards.DefaultStreakGrace); err != nil {
			b.Fatal(err)
		}
		<-got
	}
}

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
