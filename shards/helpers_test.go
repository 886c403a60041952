package shards_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/shards"
)

// quick bounds what must happen at once: far below the minute-long rate
// limits and the 20 s client timeout of these tests.
const quick = 5 * time.Second

// world is a fake Discord and a Group of sessions pointed at it.
type world struct {
	t     *testing.T
	srv   *discordtest.Server
	group *shards.Group
	clock *clock.Fake
}

// newWorld starts a fake Discord with guilds on shardCount shards and a Group
// for it (not opened), closed at cleanup, with a fake clock for the waits.
func newWorld(t *testing.T, shardCount int, opts ...shards.Option) *world {
	t.Helper()
	var guilds []string
	for shard := range shardCount {
		guilds = append(guilds, discordtest.GuildIDForShard(0, shard, shardCount))
	}
	srv, err := discordtest.NewServer(discordtest.WithShardCount(shardCount), discordtest.WithGuilds(guilds...))
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	fake := clock.NewFake(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	opts = append([]shards.Option{shards.WithAPIBase(srv.APIBase()), shards.WithClock(fake)}, opts...)
	g, err := shards.New(srv.Token(), shardCount, opts...)
	require.NoError(t, err)
	for _, s := range g.Sessions() {
		s.ShouldReconnectOnError = false // see discordtest.Server.NewSession
	}
	t.Cleanup(func() { require.NoError(t, g.Close()) }) // before srv.Close: cleanups run last first
	return &world{t: t, srv: srv, group: g, clock: fake}
}

// ctx returns a context bounded by quick.
func (w *world) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), quick)
	w.t.Cleanup(cancel)
	return ctx
}

// async runs f on its own goroutine and returns its result channel.
func async(f func() error) <-chan error {
	c := make(chan error, 1)
	go func() { c <- f() }()
	return c
}

// within returns what c delivers, failing the test if it takes longer than quick.
func within(t *testing.T, c <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(quick):
		t.Fatalf("%s did not return within %s", what, quick)
		return nil
	}
}

// TestMain fails the package if a test leaves a goroutine behind.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
