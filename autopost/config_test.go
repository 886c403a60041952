package autopost_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
)

// TestConfigErrorNamesTheField: New rejects an invalid Config with a
// *ConfigError that names the field.
func TestConfigErrorNamesTheField(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	for _, tc := range []struct {
		cfg   autopost.Config
		field string
		msg   string
	}{
		{autopost.Config{Mode: 7}, "autopost.Config.Mode", "autopost.Config.Mode: unknown mode 7"},
		{autopost.Config{Interval: -time.Second}, "autopost.Config.Interval", "autopost.Config.Interval: must not be negative"},
		{autopost.Config{Refresh: -1}, "autopost.Config.Refresh", "autopost.Config.Refresh: must not be negative"},
		{autopost.Config{ReadyTimeout: -1}, "autopost.Config.ReadyTimeout", "autopost.Config.ReadyTimeout: must not be negative"},
		{autopost.Config{ShardCount: -2}, "autopost.Config.ShardCount", "autopost.Config.ShardCount: must not be negative"},
		{autopost.Config{MaxBackfill: 101}, "autopost.Config.MaxBackfill", "autopost.Config.MaxBackfill: 101 is over 100 (one metrics batch)"},
	} {
		_, err := autopost.New(client, tc.cfg)
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, "%+v", tc.cfg)
		assert.Equal(t, tc.field, ce.Field)
		assert.NotEmpty(t, ce.Problem)
		assert.EqualError(t, err, tc.msg)
	}
}

// TestPrintedCounterHoldsNoBotToken: a Counter or Poster with sessions
// attached, printed under any verb or logged, does not show a session's bot
// token (fmt prints a *discordgo.Session reached under %s, %q, %d or %x in
// full, and the Counter keys its shards by session).
func TestPrintedCounterHoldsNoBotToken(t *testing.T) {
	t.Parallel()
	s, err := discordgo.New("Bot MTIzNDU2Nzg5MDEyMzQ1Njc4.BOTSEKRIT.token")
	require.NoError(t, err)
	c, err := topgg.New("x.y.z")
	require.NoError(t, err)
	p, err := autopost.New(c, autopost.Config{})
	require.NoError(t, err)
	_, err = p.Attach(s)
	require.NoError(t, err)
	counter := autopost.NewCounter(1)
	_, err = counter.Attach(s)
	require.NoError(t, err)

	out := testlog.PrintAll(counter, p, struct{ C *autopost.Counter }{counter})
	require.NotContains(t, out, "SEKRIT")
	require.NotContains(t, out, fmt.Sprintf("%x", "BOTSEKRIT"))
	require.NotContains(t, out, fmt.Sprintf("%X", "BOTSEKRIT"))
	require.Contains(t, out, "autopost.Counter{shard count: 1, sessions attached: 1}")
	require.Equal(t, "autopost.Counter(nil)", fmt.Sprint((*autopost.Counter)(nil)))
}

// TestPrintingThePosterWhileSessionsAttachIsSafe: fmt of a Poster walked its
// Counter unlocked while sessions were attached (a data race, under -race).
func TestPrintingThePosterWhileSessionsAttachIsSafe(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("x.y.z")
	require.NoError(t, err)
	p, err := autopost.New(c, autopost.Config{})
	require.NoError(t, err)
	out := testlog.PrintWhile(func() {
		for range 200 {
			s, err := discordgo.New("Bot MTIzNDU2Nzg5MDEyMzQ1Njc4.BOTSEKRIT.token")
			if !assert.NoError(t, err) {
				return
			}
			if detach, err := p.Attach(s); assert.NoError(t, err) {
				detach()
			}
		}
	}, p)
	require.Contains(t, out, "autopost.Poster")
}
