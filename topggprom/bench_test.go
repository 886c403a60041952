package topggprom_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topggprom"
)

// Run with: go test -run '^$' -bench . -benchmem ./topggprom/
//
// The cost of each hook once its labels have been seen: no allocation.

func newBenchMetrics(b *testing.B) *topggprom.Metrics {
	m, err := topggprom.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkObserveRequest(b *testing.B) {
	m := newBenchMetrics(b)
	r := topgg.Request{Route: topgg.RouteMetrics, Method: "PATCH", Attempt: 1, Status: 204, Duration: 80 * time.Millisecond, Outcome: topgg.OutcomeOK}
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRequest(r)
	}
}

func BenchmarkVoteRewarded(b *testing.B) {
	m := newBenchMetrics(b)
	b.ReportAllocs()
	for b.Loop() {
		m.VoteRewarded("webhook", 3*time.Second)
	}
}

func BenchmarkAutopostAttempt(b *testing.B) {
	m := newBenchMetrics(b)
	b.ReportAllocs()
	for b.Loop() {
		m.AutopostAttempt("posted", 1000, 2, 0)
	}
}
