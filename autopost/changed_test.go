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
	// state is what each step changes: the servers, and those in an outage.
	state := func() [2]int {
		counts, err := c.Counts(context.Background())
		require.NoError(t, err)
		return [2]int{counts.Servers, counts.Unavailable}
	}
	require.Eventually(t, func() bool { return state() == [2]int{1, 0} }, 5*time.Second, time.Millisecond)

	ctx := context.Background()
	joined := discordtest.GuildIDForShard(1, 0, 1)
	for _, step := range []struct {
		name string
		do   func() error
		want [2]int
	}{
		{"join", func() error { return dc.Join(ctx, joined) }, [2]int{2, 0}},
		{"outage", func() error { return dc.Outage(ctx, joined) }, [2]int{2, 1}},
		{"restore", func() error { return dc.Restore(ctx, joined) }, [2]int{2, 0}},
		{"leave", func() error { return dc.Remove(ctx, joined) }, [2]int{1, 0}},
	} {
		changed := c.Changed()
		require.NoError(t, step.do(), step.name)
		// Another wake (a heartbeat-forced resume under load, say) may close
		// the channel before the step's event is applied: wait for the close
		// that comes with the step's counts, not merely the first one.
		deadline := time.After(5 * time.Second)
		for seen := false; !seen; {
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("Changed not closed by a %s (counts %v, want %v)", step.name, state(), step.want)
			}
			if seen = state() == step.want; !seen {
				changed = c.Changed()
				seen = state() == step.want // applied (and woken) between the two reads
			}
		}
	}
}
