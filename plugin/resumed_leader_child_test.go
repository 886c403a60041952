package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// The resumed-leader test (resumed_leader_test.go) runs this test binary as
// the processes of a fleet: childEnv names the process (and turns TestMain
// into childMain); the rest of its settings come in the child* variables.
const (
	childEnv         = "PLUGIN_TEST_CHILD"
	childRedisEnv    = "PLUGIN_TEST_REDIS"
	childTopggEnv    = "PLUGIN_TEST_TOPGG" // base URL
	childTopggTokEnv = "PLUGIN_TEST_TOPGG_TOKEN"
	childDiscordEnv  = "PLUGIN_TEST_DISCORD" // host:port of the fake Discord
	childDiscordTok  = "PLUGIN_TEST_DISCORD_TOKEN"
	childShardEnv    = "PLUGIN_TEST_SHARD" // "id/count"
	childGatesEnv    = "PLUGIN_TEST_GATES" // the gate files' directory
	childGuildEnv    = "PLUGIN_TEST_GUILD"
)

// senderHeader names the process that sent a request, on every request a
// child makes to either fake, so that the test can tell who sent what;
// sentAtHeader is when the request reached the process's HTTP transport
// (Unix nanoseconds), after every check the library makes before it.
const (
	senderHeader = "X-Test-Sender"
	sentAtHeader = "X-Test-Sent-At"
)

// Timing of the fleet in the resumed-leader test: short, on loopback.
const (
	childLeaseTTL = fleet.MinLeaseTTL      // 1 s, the shortest a fleet takes
	childInterval = 100 * time.Millisecond // posts (refreshed each time) and polls
	// childRetryDelay is the reward handler's first retry delay: the retry
	// comes 150-300 ms after the failure (jittered).
	childRetryDelay = 300 * time.Millisecond
	rewardRole      = "900000000000000001"
)

// sender adds the senderHeader to every request, and, when addr is set,
// sends it to addr (the fake Discord) whatever the host (discordgo's
// endpoints are discord.com's).
type sender struct {
	name string
	addr string
	base http.RoundTripper
}

func (s sender) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Header.Set(senderHeader, s.name)
	out.Header.Set(sentAtHeader, strconv.FormatInt(time.Now().UnixNano(), 10))
	if s.addr != "" {
		out.URL.Scheme, out.URL.Host, out.Host = "http", s.addr, ""
	}
	return s.base.RoundTrip(out)
}

// childMain is one process of the fleet: a plugin with every job on, one
// shard, in fleet mode, two handler calls at a time. Its reward handler
// gives the voter a role through Discord. For the first vote of a round
// (roundVotes) it then waits until the gate file of the round is there
// (gateOf), having written "entered-<gate>" with its name; the second vote's
// first call fails at once, having written "failed-<gate>", so that its
// retry comes 150-300 ms later; the third waits for a free slot. A leader
// stopped then has a handler call, a retry, a post and a poll due. It prints "leader <token>" and "follower" on stdout at each change
// of its leadership, and runs until SIGTERM.
func childMain(name string) int {
	if err := runChild(name); err != nil {
		fmt.Println("error", err)
		return 1
	}
	return 0
}

func runChild(name string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("process", name)
	var shard, shards int
	if _, err := fmt.Sscanf(os.Getenv(childShardEnv), "%d/%d", &shard, &shards); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	client, err := topgg.New(os.Getenv(childTopggTokEnv), topgg.WithBaseURL(os.Getenv(childTopggEnv)),
		topgg.WithHTTPClient(&http.Client{Transport: sender{name: name, base: http.DefaultTransport}}),
		topgg.WithRetryPolicy(topgg.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}))
	if err != nil {
		return err
	}
	sess, err := childSession(name, shard, shards)
	if err != nil {
		return err
	}
	rdb, err := fleet.NewUniversalClient(os.Getenv(childRedisEnv))
	if err != nil {
		return err
	}
	defer rdb.Close()
	f, err := fleet.New(rdb, fleet.Config{Bot: "app1", ShardCount: shards, LeaseTTL: childLeaseTTL,
		ReportEvery: 100 * time.Millisecond, Logger: log})
	if err != nil {
		return err
	}
	state, err := redisstate.New(rdb, "app1")
	if err != nil {
		return err
	}
	gates := os.Getenv(childGatesEnv)
	cfg := plugin.Config{
		Autopost: "v1", AutopostInterval: childInterval, AutopostRefresh: childInterval,
		SyncCommands: new(true), VotePollInterval: new(childInterval), VoteLookback: 13 * time.Hour,
		VoteConcurrency: 2, VoteRetryDelay: childRetryDelay,
	}
	p, err := plugin.New(client, cfg, plugin.WithFleet(f), plugin.WithState(state), plugin.WithLogger(log),
		plugin.WithRewardHandler(childReward(name, sess, gates, os.Getenv(childGuildEnv))),
		plugin.WithCommands([]*discordgo.ApplicationCommand{{Name: "vote", Description: "Vote"}}))
	if err != nil {
		return err
	}
	if err := p.Attach(sess); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { tellLeadership(ctx, f.Lease()) })
	runErr := make(chan error, 1)
	wg.Go(func() { runErr <- p.Run(ctx) })
	if err := sess.Open(); err != nil {
		stop()
		wg.Wait()
		return errors.Join(err, <-runErr)
	}
	wg.Wait()
	return errors.Join(<-runErr, sess.Close())
}

// childSession returns the shard's session, its requests sent to the fake
// Discord and marked with the process's name.
func childSession(name string, shard, shards int) (*discordgo.Session, error) {
	sess, err := discordgo.New("Bot " + os.Getenv(childDiscordTok))
	if err != nil {
		return nil, err
	}
	sess.Client = &http.Client{Transport: sender{name: name, addr: os.Getenv(childDiscordEnv), base: http.DefaultTransport},
		Timeout: 10 * time.Second}
	sess.ShardID, sess.ShardCount = shard, shards
	sess.Identify.Shard = &[2]int{shard, shards}
	sess.Identify.Intents = discordgo.IntentsGuilds
	sess.ShouldReconnectOnError = false
	return sess, nil
}

// childReward is the reward handler of childMain.
func childReward(name string, sess *discordgo.Session, gates, guild string) voterewards.Handler {
	var failedOnce sync.Map // votes whose first call in this process failed
	return func(ctx context.Context, v voterewards.Vote) error {
		gate := gateOf(v.PlatformID)
		if roundVote(v.PlatformID) == 1 {
			if _, failed := failedOnce.LoadOrStore(v.Key(), true); !failed {
				// Fails once: its retry comes VoteRetryDelay later, while
				// the test holds this process stopped.
				if err := os.WriteFile(filepath.Join(gates, "failed-"+gate), []byte(name), 0o600); err != nil {
					return err
				}
				return errors.New("not now; try again")
			}
		}
		if err := sess.GuildMemberRoleAdd(guild, v.PlatformID, rewardRole, discordgo.WithContext(ctx)); err != nil {
			return err
		}
		if roundVote(v.PlatformID) != 0 {
			return nil
		}
		// The round's first vote holds its handler until the gate opens.
		if err := os.WriteFile(filepath.Join(gates, "entered-"+gate), []byte(name), 0o600); err != nil {
			return err
		}
		for {
			if _, err := os.Stat(filepath.Join(gates, "open-"+gate)); err == nil {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Millisecond):
			}
		}
	}
}

// tellLeadership prints each change of l's leadership until ctx is done.
func tellLeadership(ctx context.Context, l *fleet.Lease) {
	var last int64 = -1
	for ctx.Err() == nil {
		if s := l.State(); s.Token != last {
			last = s.Token
			if s.Leader {
				fmt.Println("leader", strconv.FormatInt(s.Token, 10))
			} else {
				fmt.Println("follower")
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Millisecond):
		}
	}
}

// roundVote returns the index of a vote in its round (roundVotes).
func roundVote(platformID string) int { return int(platformID[len(platformID)-1] - '0') }

// gateOf returns the round of a vote: the first 4 digits of its voter's id
// (roundVotes).
func gateOf(platformID string) string { return platformID[:4] }

// roundVotes returns n votes of round k, created now: their voters' ids
// start with "9" and k on 3 digits.
func roundVotes(k, n int) []topggtest.Vote {
	now := time.Now().UTC()
	out := make([]topggtest.Vote, n)
	for i := range out {
		out[i] = topggtest.Vote{UserID: fmt.Sprintf("8%03d%014d", k, i), PlatformID: fmt.Sprintf("9%03d%014d", k, i),
			Weight: 1, CreatedAt: now, ExpiresAt: now.Add(12 * time.Hour)}
	}
	return out
}
