package voterperks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterperks"
)

// The killed-leader test runs this test binary as the fleet's first process
// (shard 0 of 3); its settings come in these variables.
const (
	childEnv        = "VOTERPERKS_TEST_CHILD"
	childRedisEnv   = "VOTERPERKS_TEST_REDIS"
	childTopggEnv   = "VOTERPERKS_TEST_TOPGG" // base URL
	childTopggTok   = "VOTERPERKS_TEST_TOPGG_TOKEN"
	childDiscordEnv = "VOTERPERKS_TEST_DISCORD" // API base
	childDiscordTok = "VOTERPERKS_TEST_DISCORD_TOKEN"
	childBotEnv     = "VOTERPERKS_TEST_BOT"
	childGuildEnv   = "VOTERPERKS_TEST_GUILD"
)

// childLease is the lease of every process of the killed-leader test.
const childLease = time.Second

// childMain runs the process until SIGTERM (or SIGKILL), printing "leader"
// on stdout once it leads.
func childMain() int {
	if err := runChild(); err != nil {
		fmt.Println("error", err)
		return 1
	}
	return 0
}

func runChild() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("process", "child")
	client, err := topgg.New(os.Getenv(childTopggTok), topgg.WithBaseURL(os.Getenv(childTopggEnv)))
	if err != nil {
		return err
	}
	group, err := shards.New(os.Getenv(childDiscordTok), 3, shards.WithAPIBase(os.Getenv(childDiscordEnv)), shards.WithShardIDs(0))
	if err != nil {
		return err
	}
	rdb, err := fleet.NewUniversalClient(os.Getenv(childRedisEnv))
	if err != nil {
		return err
	}
	defer rdb.Close()
	f, err := fleet.New(rdb, fleet.Config{Bot: os.Getenv(childBotEnv), ShardCount: 3, LeaseTTL: childLease, Logger: log})
	if err != nil {
		return err
	}
	state, err := redisstate.New(rdb, os.Getenv(childBotEnv))
	if err != nil {
		return err
	}
	p, err := plugin.New(client, childConfig(), plugin.WithFleet(f), plugin.WithState(state), plugin.WithLogger(log),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: os.Getenv(childBotEnv), Reminders: true,
			Role: &voterperks.Role{GuildID: os.Getenv(childGuildEnv), RoleID: voterRole}}))
	if err != nil {
		return err
	}
	if err := p.Attach(group.Sessions()...); err != nil {
		return err
	}
	go func() {
		for ctx.Err() == nil && !f.Lease().State().Leader {
			time.Sleep(time.Millisecond)
		}
		fmt.Println("leader")
	}()
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()
	return errors.Join(group.Open(ctx), <-ran, group.Close())
}

// childConfig is the plugin Config of every process of the killed-leader
// test.
func childConfig() plugin.Config {
	return plugin.Config{
		Autopost: "off", SyncCommands: new(false), VotePollInterval: new(20 * time.Millisecond),
		VoteLookback: 13 * time.Hour, VoteRetryDelay: 20 * time.Millisecond,
	}
}
