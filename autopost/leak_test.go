package autopost_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRunLeavesNoGoroutine runs alone (not parallel), so that any goroutine
// left after Run returned and the closes is the Poster's. Run is run twice
// in sequence, the way a fleet re-runs its leader's jobs.
func TestRunLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	dc, err := discordtest.NewServer(discordtest.WithGuilds(discordtest.GuildIDForShard(0, 0, 1)))
	require.NoError(t, err)
	defer dc.Close()
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	defer tg.Close()
	client, err := tg.NewClient()
	require.NoError(t, err)
	p, err := autopost.New(client, autopost.Config{Interval: 10 * time.Millisecond, Refresh: 10 * time.Millisecond})
	require.NoError(t, err)
	sess, err := dc.NewSession(0, 1)
	require.NoError(t, err)
	detach, err := p.Attach(sess)
	require.NoError(t, err)
	run := func() (stop func() error) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		return func() error { cancel(); return <-done }
	}
	stop := run()
	require.NoError(t, sess.Open())
	require.Eventually(t, func() bool { return len(tg.Metrics()) > 0 }, 5*time.Second, 5*time.Millisecond)

	// A post held in flight by the server is cancelled when Run's context ends.
	require.NoError(t, tg.Inject(topggtest.Fault{Delay: time.Minute, Times: 1}))
	require.NoError(t, dc.Join(context.Background(), discordtest.GuildIDForShard(1, 0, 1)))
	require.Eventually(t, func() bool { return tg.PendingFaults() == 0 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, stop())

	// Run again: it posts again (a new leader posts at once).
	posted := len(tg.Metrics())
	stop = run()
	require.Eventually(t, func() bool { return len(tg.Metrics()) > posted }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, stop())
	detach()
	require.NoError(t, sess.Close())
}

// TestRunReturnsOnCancel: Run returns nil once its context is done, also
// while it waits for READY.
func TestRunReturnsOnCancel(t *testing.T) {
	client, err := topgg.New("token")
	require.NoError(t, err)
	p, err := autopost.New(client, autopost.Config{})
	require.NoError(t, err)
	dc, err := discordtest.NewServer()
	require.NoError(t, err)
	defer dc.Close()
	sess, err := dc.NewSession(0, 1)
	require.NoError(t, err)
	_, err = p.Attach(sess) // never opened: Run waits for READY
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	assert.Never(t, func() bool { return len(done) > 0 }, 50*time.Millisecond, 10*time.Millisecond,
		"Run waits for READY")
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
