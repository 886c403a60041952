package topgg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

// TestNilOption: a nil Option is an error (ErrNilArgument), not a panic.
func TestNilOption(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("token", topgg.WithUserAgent("ua"), nil)
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	require.Contains(t, err.Error(), "option 1")
	require.Nil(t, c)
}

// TestClientNotMade: every exported method of a nil or zero *Client (and of
// the Legacy it returns, and of a nil *Legacy) returns ErrNotConfigured, or
// false, and none panics or sends anything; formatting prints no panic.
func TestClientNotMade(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const id = "264811613708746752"
	client := map[string]func(*topgg.Client) error{
		"Project":       func(c *topgg.Client) error { _, err := c.Project(ctx); return err },
		"UpdateProject": func(c *topgg.Client) error { return c.UpdateProject(ctx, topgg.ProjectUpdate{}) },
		"SetCommands":   func(c *topgg.Client) error { return c.SetCommands(ctx, []json.RawMessage{}) },
		"UpdateMetrics": func(c *topgg.Client) error { return c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1)}) },
		"PostMetricsBatch": func(c *topgg.Client) error {
			return c.PostMetricsBatch(ctx, []topgg.MetricsSample{{Metrics: topgg.BotMetrics{ServerCount: new(1)}}})
		},
		"PostAnnouncement": func(c *topgg.Client) error {
			_, err := c.PostAnnouncement(ctx, topgg.NewAnnouncement{})
			return err
		},
		"Votes":      func(c *topgg.Client) error { _, err := c.Votes(ctx, topgg.VotesQuery{}); return err },
		"VoteStatus": func(c *topgg.Client) error { _, err := c.VoteStatus(ctx, "", ""); return err },
		"AllVotes": func(c *topgg.Client) error {
			var last error
			for _, err := range c.AllVotes(ctx, time.Time{}) {
				last = err
			}
			return last
		},
		"TokenRefused": func(c *topgg.Client) error { return c.TokenRefused() },
		"Loopback": func(c *topgg.Client) error {
			require.False(t, c.Loopback())
			return topgg.ErrNotConfigured
		},
		"Legacy": func(c *topgg.Client) error { return legacyCalls(ctx, t, c.Legacy(), id) },
		"Format": func(c *topgg.Client) error {
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
				s := fmt.Sprintf(verb, c)
				require.NotContains(t, s, "PANIC", verb)
				require.Contains(t, s, "not made by topgg.New", verb)
			}
			return topgg.ErrNotConfigured
		},
	}
	// The table covers every exported method.
	var names []string
	typ := reflect.TypeFor[*topgg.Client]()
	for i := range typ.NumMethod() {
		names = append(names, typ.Method(i).Name)
	}
	require.ElementsMatch(t, names, slices.Collect(maps.Keys(client)))

	for name, call := range client {
		for _, c := range []*topgg.Client{nil, {}} {
			err := call(c)
			require.ErrorIs(t, err, topgg.ErrNotConfigured, "%s on %#v", name, c)
		}
	}
	require.ErrorIs(t, legacyCalls(ctx, t, nil, id), topgg.ErrNotConfigured)
	require.ErrorIs(t, legacyCalls(ctx, t, &topgg.Legacy{}, id), topgg.ErrNotConfigured)
	require.NotContains(t, fmt.Sprint((*topgg.Legacy)(nil)), "PANIC")
}

// legacyCalls calls every exported method of l and requires each to fail with
// ErrNotConfigured; it returns that error.
func legacyCalls(ctx context.Context, t *testing.T, l *topgg.Legacy, id string) error {
	t.Helper()
	calls := map[string]func() error{
		"SearchBots": func() error { _, err := l.SearchBots(ctx, topgg.BotQuery{}); return err },
		"Bot":        func() error { _, err := l.Bot(ctx, id); return err },
		"Voters":     func() error { _, err := l.Voters(ctx, id); return err },
		"Stats":      func() error { _, err := l.Stats(ctx, id); return err },
		"PostStats":  func() error { return l.PostStats(ctx, id, topgg.StatsUpdate{ServerCount: 1}) },
		"HasVoted": func() error {
			ok, err := l.HasVoted(ctx, id, id)
			require.False(t, ok)
			return err
		},
		"String": func() error {
			require.NotContains(t, l.String(), "PANIC")
			return topgg.ErrNotConfigured
		},
	}
	var names []string
	typ := reflect.TypeFor[*topgg.Legacy]()
	for i := range typ.NumMethod() {
		names = append(names, typ.Method(i).Name)
	}
	require.ElementsMatch(t, names, slices.Collect(maps.Keys(calls)))
	for name, call := range calls {
		require.ErrorIs(t, call(), topgg.ErrNotConfigured, name)
	}
	return topgg.ErrNotConfigured
}
