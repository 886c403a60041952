package autopost_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
)

// TestChangedFiresOnEveryCountChange: Changed is closed by a guild joining,
// going into an outage, coming back and leaving, not only by READY, so
// that a fleet process publishes every change.
func TestChangedFiresOnEveryCountChange(t *testing.T) {
	t.Parallel()
	dc, err := discordtest.NewServer(discordtest.WithGuilds(discordtest.GuildIDForShard(0, 0, 1)))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	c := autopost.NewCounter(1)
	s, err := dc.NewSession(0, 1)
	require.NoError(t, err)
	detach, err := c.Attach(s)
	require.NoError(t, err)
	t.Cleanup(detach)
	require.NoError(t, s.Open())
	t.Cleanup(func() { _ = s.Close() })
	servers := func() int {
		counts, err := c.Counts(context.Background())
		require.NoError(t, err)
		return counts.Servers
	}
	require.Eventually(t, func() bool { return servers() == 1 }, 5*time.Second, time.Millisecond)

	ctx := context.Background()
	joined := discordtest.GuildIDForShard(1, 0, 1)
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"join", func() error { return dc.Join(ctx, joined) }},
		{"outage", func() error { return dc.Outage(ctx, joined) }},
		{"restore", func() error { return dc.Restore(ctx, joined) }},
		{"leave", func() error { return dc.Remove(ctx, joined) }},
	} {
		changed := c.Changed()
		require.NoError(t, step.do(), step.name)
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatalf("Changed not closed by a %s", step.name)
		}
	}
	require.Equal(t, 1, servers())
}
