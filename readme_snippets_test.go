package readme_test

// The README's Go snippets, each between a "readme:begin NAME" and a
// "readme:end" line, in the README's order (TestReadmeSnippetsAreCompiled
// checks that they are the README's blocks, word for word). What a snippet
// needs and does not show (a session, a role to give) is declared outside the
// markers, so that the snippet compiles as the README shows it.

import (
	"context"
	"log"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/topggprom"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// myCommands are a bot's slash commands, as it registers them on Discord.
var myCommands = []*discordgo.ApplicationCommand{{Name: "vote", Description: "Vote for the bot"}}

// grantRole and takeRole stand for what a bot does for a voter.
func grantRole(context.Context, string) error { return nil }
func takeRole(context.Context, string) error  { return nil }

func clientTour(ctx context.Context, discordUserID string) error {
	// readme:begin client
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN")) // the token alone, without "Bearer "
	if err != nil {
		return err
	}

	// v1: the token's own project.
	project, err := client.Project(ctx)
	if err != nil {
		return err
	}
	log.Printf("listed as %s", project.Name)
	err = client.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1200), ShardCount: new(2)})
	if err != nil {
		return err
	}
	active, err := client.VoteStatus(ctx, discordUserID, topgg.UserIDDiscord) // no vote: nil, not an error
	if err != nil {
		return err
	}
	log.Printf("voted: %t", active != nil)
	for vote, err := range client.AllVotes(ctx, time.Now().Add(-12*time.Hour)) {
		if err != nil {
			return err // topgg.ErrPagination if the service's cursors cycle
		}
		log.Printf("%s voted at %s", vote.PlatformID, vote.CreatedAt)
	}

	// v0: the legacy interface, limited client-side to 60 calls a minute.
	bot, err := client.Legacy().Bot(ctx, "264811613708746752", "username", "server_count")
	if err != nil {
		return err
	}
	log.Printf("%s is in %d servers", bot.Username, bot.ServerCount)
	// readme:end
	return nil
}

func autopostTour(ctx context.Context, client *topgg.Client, sessions []*discordgo.Session) error {
	// readme:begin autopost
	poster, err := autopost.New(client, autopost.Config{}) // v1 metrics every 30 minutes
	if err != nil {
		return err
	}
	detach, err := poster.Attach(sessions...) // every shard's session, before Open (an open one is an error)
	if err != nil {
		return err
	}
	defer detach()
	return poster.Run(ctx) // until ctx is done; the first post once every shard is ready
	// readme:end
}

func commandsTour(ctx context.Context, client *topgg.Client) error {
	// readme:begin commands
	state, err := boltstate.Open("state") // the bot's state keeps the last published hash
	if err != nil {
		return err
	}
	defer state.Close()
	syncer, err := commands.New(client, commands.Config{
		Store:    state,
		Commands: myCommands, // what Run publishes
		OnResult: func(ctx context.Context, r commands.Result, err error) {
			log.Printf("command sync: %s (%v)", r.Outcome, err) // published, unchanged, skipped or failed
		},
	})
	if err != nil {
		return err
	}
	// Once: PUT /v1/projects/@me/commands, only when they changed.
	if _, err := syncer.Sync(ctx, myCommands); err != nil {
		return err
	}

	// Or as a job: at start and every 15 minutes; retries what may pass, never resends what was refused.
	return syncer.Run(ctx)
	// readme:end
}

func voterewardsTour(ctx context.Context, client *topgg.Client, discordUserID string) error {
	// readme:begin voterewards
	state, err := boltstate.Open("state") // one bbolt file; survives kill -9
	if err != nil {
		return err
	}
	defer state.Close()
	poller, err := voterewards.New(client, voterewards.Config{
		Store:    state,
		OnReward: func(ctx context.Context, v voterewards.Vote) error { return grantRole(ctx, v.PlatformID) },
		OnExpire: func(ctx context.Context, v voterewards.Vote) error { return takeRole(ctx, v.PlatformID) },
	})
	if err != nil {
		return err
	}
	ran := make(chan error, 1)
	go func() { ran <- poller.Run(ctx) }() // until ctx is done; then running handlers get GracePeriod to finish

	st := poller.Active(discordUserID) // from memory, no request
	log.Printf("active: %t until %s", st.Active, st.Until)
	return <-ran
	// readme:end
}

func webhookTour(poller *voterewards.Poller) error {
	// readme:begin webhook
	secrets, err := webhook.SplitSecrets(os.Getenv("TOPGG_WEBHOOK_SECRET")) // "whs_...", comma-separated during a rotation
	if err != nil {
		return err
	}
	receiver, err := webhook.New(webhook.Config{
		Secrets: secrets,
		OnVote:  poller.IngestWebhook, // or your own func(ctx, webhook.Vote) error: nil only once durable
	})
	if err != nil {
		return err
	}
	http.Handle("/topgg/webhook", receiver)
	// readme:end
	return nil
}

func postgresTour(ctx context.Context, client *topgg.Client, cfg plugin.Config, discordUserID string) error {
	// readme:begin postgres
	pool, err := pgstore.Connect(ctx, os.Getenv("DATABASE_URL")) // errors never show the password
	if err != nil {
		return err
	}
	defer pool.Close()
	store, err := pgstore.Open(ctx, pool, pgstore.Config{}) // creates or migrates its schema ("topgg")
	if err != nil {
		return err
	}
	credit := store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		_, err := tx.Exec(ctx, `INSERT INTO wallets (user_id, coins) VALUES ($1, $2)
			ON CONFLICT (user_id) DO UPDATE SET coins = wallets.coins + EXCLUDED.coins`, v.PlatformID, 100*v.Weight)
		return err // an error rolls the coins back with the vote's done mark; the vote is retried
	})
	p, err := plugin.New(client, cfg, plugin.WithState(store), plugin.WithRewardHandler(credit))
	if err != nil {
		return err
	}
	go func() { _ = p.Run(ctx) }()

	st, err := store.Stats(ctx, discordUserID) // the voter's ledger, one read
	if err != nil {
		return err
	}
	month, _ := st.ThisMonth(time.Now())
	log.Printf("streak %d (best %d), %d votes this month, %d in all", st.CurrentStreak(time.Now()), st.BestStreak, month, st.Votes)
	top, err := store.Leaderboard(ctx, time.Now(), 10) // this UTC month; time.Time{} for all time
	if err != nil {
		return err
	}
	for i, s := range top {
		log.Printf("#%d %s: %d votes (weighted %d)", i+1, s.UserID, s.Votes, s.Total)
	}
	// readme:end
	return nil
}

func handlersTour(client *topgg.Client, cfg plugin.Config, state voterewards.State) error {
	// readme:begin handlers
	var p *plugin.Plugin // the expiry handler asks it whether the user voted again
	p, err := plugin.New(client, cfg, plugin.WithState(state),
		plugin.WithRewardHandler(func(ctx context.Context, v voterewards.Vote) error {
			return grantRole(ctx, v.PlatformID) // idempotent on v.Key()
		}),
		plugin.WithExpiryHandler(func(ctx context.Context, v voterewards.Vote) error {
			if p.Active(v.PlatformID).Active {
				return nil // voted again since: keep the role
			}
			return takeRole(ctx, v.PlatformID)
		}))
	// readme:end
	_ = p
	return err
}

// readme:begin voter features
// newVoterBot wires the voter features into a bot's plugin: call it before the sessions open.
func newVoterBot(ctx context.Context, client *topgg.Client, cfg plugin.Config, state voterewards.State, sessions []*discordgo.Session, botID, guildID, roleID string) (*plugin.Plugin, error) {
	p, err := plugin.New(client, cfg, plugin.WithState(state), // the opt-ins live with the votes
		plugin.WithCommands([]*discordgo.ApplicationCommand{premiumCommand}), // /vote and /leaderboard are added
		plugin.WithVoterPerks(plugin.VoterPerks{
			BotID:     botID,                                              // the vote link: https://top.gg/bot/<botID>/vote
			Role:      &voterperks.Role{GuildID: guildID, RoleID: roleID}, // held while the vote is active
			Reminders: true,                                               // a DM when the user can vote again (opt-in)
		}))
	if err != nil {
		return nil, err
	}
	for _, s := range sessions {
		s.AddHandler(p.Perks().Gate(premium, "premium")) // runs premium for voters only
	}
	if err := p.Attach(sessions...); err != nil { // answers /vote and /leaderboard too
		return nil, err
	}
	return p, p.RegisterCommands(ctx, botID) // on Discord: premium, /vote, /leaderboard
}

// readme:end

func shardsTour(ctx context.Context, discordToken string, shardCount int) error {
	// readme:begin shards
	group, err := shards.New(discordToken, shardCount) // one session per shard; no "Bot " prefix
	if err != nil {
		return err
	}
	defer group.Close()                     // whatever Open returned
	if err := group.Open(ctx); err != nil { // SIGTERM during a slow or silent Discord ends it at once
		return err
	}
	// readme:end
	return nil
}

func fleetTour(ctx context.Context, client *topgg.Client, cfg plugin.Config, discordToken, botID string) error {
	// readme:begin fleet
	rdb, err := fleet.NewUniversalClient(os.Getenv("REDIS_URL")) // redis://, redis+cluster://, redis+sentinel://
	if err != nil {
		return err
	}
	defer rdb.Close()
	f, err := fleet.New(rdb, fleet.Config{Bot: botID, ShardCount: 6}) // who leads, and the counts
	if err != nil {
		return err
	}
	state, err := redisstate.New(rdb, botID) // the votes, the command hash, the opt-ins
	if err != nil {
		return err
	}
	group, err := shards.New(discordToken, 6, shards.WithShardIDs(2, 3)) // this process runs shards 2 and 3 of 6
	if err != nil {
		return err
	}
	defer group.Close()
	p, err := plugin.New(client, cfg, plugin.WithFleet(f), plugin.WithState(state), plugin.WithCommands(myCommands))
	if err != nil {
		return err
	}
	if err := p.Attach(group.Sessions()...); err != nil {
		return err
	}
	if err := group.Open(ctx); err != nil {
		return err
	}
	return p.Run(ctx)
	// readme:end
}

func operatingTour(ctx context.Context, token string, cfg plugin.Config, state voterewards.State) error {
	// readme:begin operating
	c, err := topggprom.New(prometheus.DefaultRegisterer)
	if err != nil {
		return err
	}
	client, err := topgg.New(token, topgg.WithObserver(c.ObserveRequest))
	if err != nil {
		return err
	}
	p, err := plugin.New(client, cfg, plugin.WithState(state), plugin.WithMetrics(c)) // every job the plugin runs
	if err != nil {
		return err
	}
	ready, err := health.NewProbe("readyz", p.ReadinessChecks()...)
	if err != nil {
		return err
	}
	http.Handle("/metrics", promhttp.Handler())
	http.Handle("/readyz", ready)
	return p.Run(ctx)
	// readme:end
}

func operatingJobsTour(client *topgg.Client, syncer *commands.Syncer, c *topggprom.Collector) error {
	// readme:begin operating without the plugin
	poster, err := autopost.New(client, autopost.Config{OnPost: c.ObservePost})
	if err != nil {
		return err
	}
	job, err := commands.New(client, commands.Config{
		Commands: myCommands,
		OnResult: func(_ context.Context, r commands.Result, err error) { c.ObserveSync(r, err) },
	})
	if err != nil {
		return err
	}
	// readme:end
	_, _ = poster, job
	return nil
}

func TestBotRewardsAWebhookVote(t *testing.T) {
	// readme:begin testing
	discord, err := discordtest.NewServer() // a fake Discord: one shard, no guild (WithGuilds adds them)
	require.NoError(t, err)
	t.Cleanup(discord.Close) // cleanups run last first: after the session's Close

	listing, err := topggtest.NewServer() // a fake Top.gg
	require.NoError(t, err)
	t.Cleanup(listing.Close)
	client, err := listing.NewClient() // topgg.New with the fake's token, URL and HTTP client
	require.NoError(t, err)

	// A throwaway PostgreSQL (skips the test, naming the package to install, when there is none).
	store, err := pgstore.Open(t.Context(), pgstoretest.Start(t).Pool(t), pgstore.Config{})
	require.NoError(t, err)

	rewarded := make(chan voterewards.Vote, 1)
	p, err := plugin.New(client, plugin.Config{
		WebhookAddr:    "127.0.0.1:0", // port 0: the system picks one, p.WebhookAddr() says which
		WebhookSecrets: plugin.WebhookSecrets{"whs_test"},
	},
		plugin.WithState(store), // or voterewards.NewMemoryStore(), or boltstate.Open(t.TempDir())
		plugin.WithLogger(slog.New(slog.NewTextHandler(t.Output(), nil))), // shown when the test fails
		plugin.WithRewardHandler(func(ctx context.Context, v voterewards.Vote) error {
			rewarded <- v
			return nil
		}))
	require.NoError(t, err)
	session, err := discord.NewSession(0, 1)
	require.NoError(t, err)
	require.NoError(t, p.Attach(session))
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-ran:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10 s of its context's end")
		}
		require.NoError(t, session.Close())
	})
	require.NoError(t, session.Open())

	// Once Run listens and the first poll read the history, the fake delivers every new vote
	// to the receiver, and the next poll is a minute away: the reward comes from the webhook.
	const voter = "300000000000000042"
	require.Eventually(t, func() bool { return p.WebhookAddr() != nil && p.Active(voter).Covered },
		10*time.Second, 10*time.Millisecond)
	require.NoError(t, listing.AddWebhook("http://"+p.WebhookAddr().String()+"/topgg/webhook", "whs_test"))
	listing.AddVote(topggtest.Vote{UserID: "100000000000000042", PlatformID: voter})
	select {
	case v := <-rewarded:
		require.Equal(t, voter, v.PlatformID)
		require.Equal(t, voterewards.OriginWebhook, v.Origin)
	case <-time.After(10 * time.Second):
		t.Fatal("the vote was not rewarded")
	}
	// readme:end
}

// The tours are compiled, not run: they need the real services.
var _ = []any{clientTour, autopostTour, commandsTour, voterewardsTour, webhookTour, postgresTour, handlersTour, newVoterBot, shardsTour, fleetTour, operatingTour, operatingJobsTour}
