package voterewards_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// events records what an Observer is told; safe for concurrent use.
type events struct{ testkit.Log[voterewards.Event] }

func (e *events) of(typ voterewards.EventType) []voterewards.Event {
	var out []voterewards.Event
	for _, ev := range e.All() {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// lastPending returns the last pending count reported, -1 if none.
func (e *events) lastPending() int {
	p := e.of(voterewards.EventPending)
	if len(p) == 0 {
		return -1
	}
	return p[len(p)-1].Pending
}

// TestObserverEvents: the observer hears every step of the pipeline, with
// counts per origin, the latency of each reward, the retries, the give-ups
// and the pending count, which drops to what stays pending and to 0 when
// Run returns.
func TestObserverEvents(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	created := time.Now().Add(-time.Minute).Truncate(time.Second).UTC()
	for i := range 3 {
		srv.AddVote(topggtest.Vote{UserID: userID(i), PlatformID: platformID(i), CreatedAt: created})
	}
	var mu sync.Mutex
	calls := map[string]int{}
	handler := func(_ context.Context, v voterewards.Vote) error {
		mu.Lock()
		defer mu.Unlock()
		calls[v.PlatformID]++
		switch {
		case v.PlatformID == platformID(1) && calls[v.PlatformID] == 1:
			return errors.New("fails once")
		case v.PlatformID == platformID(2):
			return errors.New("fails always")
		}
		return nil
	}
	var ev events
	p, stop := runPoller(t, newClient(t, srv), voterewards.Config{OnReward: handler, Store: voterewards.NewMemoryStore(),
		MaxAttempts: 2, Observer: ev.Add})
	require.Eventually(t, func() bool {
		return len(ev.of(voterewards.EventDelivered)) == 2 && len(ev.of(voterewards.EventGivenUp)) == 1
	}, 5*time.Second, time.Millisecond)

	// The webhook's record of a vote the poll stored is a duplicate.
	dup := voterewards.Vote{Vote: topgg.Vote{UserID: userID(0), PlatformID: platformID(0), CreatedAt: created}, Origin: voterewards.OriginWebhook}
	require.NoError(t, p.Ingest(context.Background(), dup))

	ingested := ev.of(voterewards.EventIngested)
	require.NotEmpty(t, ingested)
	assert.Equal(t, voterewards.Event{Type: voterewards.EventIngested, Origin: voterewards.OriginHistory, Added: 3}, ingested[0])
	assert.Equal(t, voterewards.Event{Type: voterewards.EventIngested, Origin: voterewards.OriginWebhook, Duplicates: 1}, ingested[len(ingested)-1])
	for _, d := range ev.of(voterewards.EventDelivered) {
		assert.False(t, d.Expiry)
		assert.Equal(t, voterewards.OriginHistory, d.Origin)
		assert.GreaterOrEqual(t, d.Latency, time.Minute, "from created_at, a minute ago")
		assert.Less(t, d.Latency, time.Hour)
	}
	retried := ev.of(voterewards.EventRetried)
	require.Len(t, retried, 2, "one retry each: MaxAttempts 2")
	for _, r := range retried {
		assert.False(t, r.Expiry)
	}
	assert.Equal(t, voterewards.OriginHistory, ev.of(voterewards.EventGivenUp)[0].Origin)
	assert.Equal(t, 1, ev.lastPending(), "the vote given up stays pending")

	// Redelivered, and given up again: still one pending, not two.
	require.NoError(t, p.Redeliver(context.Background()))
	require.Eventually(t, func() bool { return len(ev.of(voterewards.EventGivenUp)) == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 1, ev.lastPending())

	require.NoError(t, stop())
	assert.Equal(t, 0, ev.lastPending(), "Run holds nothing once it returned")
}

// TestObserverPanicContained: an observer that panics is logged; the votes
// are rewarded all the same.
func TestObserverPanicContained(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddVote(topggtest.Vote{UserID: userID(0), PlatformID: platformID(0)})
	rec := newRecorder()
	var buf testlog.Buffer
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(),
		Observer: func(voterewards.Event) { panic("observer bug") }, Logger: buf.Logger()})
	require.Eventually(t, func() bool { return rec.count() == 1 }, 5*time.Second, time.Millisecond)
	assert.Contains(t, buf.String(), "Observer panicked")
	assert.Equal(t, 1, strings.Count(buf.String(), "[running]"), "the stack, once")
}
