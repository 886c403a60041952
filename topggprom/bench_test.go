package topggprom_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topggprom"
	"github.com/dblkit/go-topgg/voterewards"
)

// Run with: go test -run '^$' -bench . -benchmem ./topggprom/
//
// The cost of each hook once its labels have been seen: no allocation.

func newBenchCollector(b *testing.B) *topggprom.Collector {
	c, err := topggprom.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkObserveRequest(b *testing.B) {
	c := newBenchCollector(b)
	r := topgg.Request{Route: "PATCH /v1/projects/@me/metrics", Attempt: 1, Status: 204, Duration: 80 * time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		c.ObserveRequest(r)
	}
}

// BenchmarkVoteRewarded: ObserveVote of a reward delivered.
func BenchmarkVoteRewarded(b *testing.B) {
	c := newBenchCollector(b)
	e := voterewards.Event{Type: voterewards.EventDelivered, Origin: voterewards.OriginWebhook, Latency: 3 * time.Second}
	b.ReportAllocs()
	for b.Loop() {
		c.ObserveVote(e)
	}
}

// BenchmarkAutopostAttempt: ObservePost of a post.
func BenchmarkAutopostAttempt(b *testing.B) {
	c := newBenchCollector(b)
	r := autopost.Result{Counts: autopost.Counts{Servers: 1000, Shards: 2}, Outcome: autopost.OutcomePosted}
	b.ReportAllocs()
	for b.Loop() {
		c.ObservePost(r)
	}
}
