package plugin_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// Example puts a one-shard bot on its listing: the server count is posted once
// the shard is ready, the /vote command is published, and a vote reaches the
// reward handler. It runs against the module's fakes of Discord and Top.gg; a
// real bot makes its client with topgg.New(token), its sessions with
// discordgo.New("Bot " + token), and its Config with plugin.LoadEnv.
func Example() {
	discord, err := discordtest.NewServer(discordtest.WithGuilds(
		discordtest.GuildIDForShard(0, 0, 1), discordtest.GuildIDForShard(1, 0, 1)))
	if err != nil {
		panic(err)
	}
	defer discord.Close()
	listing, err := topggtest.NewServer()
	if err != nil {
		panic(err)
	}
	defer listing.Close()
	listing.AddVote(topggtest.Vote{UserID: "800000000000000001", PlatformID: "300000000000000001"})

	client, err := listing.NewClient()
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "plugin-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	state, err := boltstate.Open(dir) // the vote cursor, the delivered votes and the commands' hash
	if err != nil {
		panic(err)
	}
	defer state.Close() // after Run returned

	posted := make(chan autopost.Result, 1)
	rewarded := make(chan voterewards.Vote, 1)
	// Every zero field of Config means its default (v1 autopost every 30
	// minutes, command sync on, votes polled every minute); a real bot loads it
	// with plugin.LoadEnv(ctx, &cfg, nil) from its TOPGG_* variables.
	p, err := plugin.New(client, plugin.Config{}, plugin.WithState(state),
		plugin.WithCommands([]*discordgo.ApplicationCommand{{Name: "vote", Description: "Vote for the bot"}}),
		plugin.WithRewardHandler(func(_ context.Context, v voterewards.Vote) error {
			rewarded <- v // a real bot gives a role, idempotently on v.Key()
			return nil
		}),
		plugin.WithOnPost(func(r autopost.Result) {
			select {
			case posted <- r:
			default:
			}
		}),
	)
	if err != nil {
		panic(err)
	}
	session, err := discord.NewSession(0, 1)
	if err != nil {
		panic(err)
	}
	if err := p.Attach(session); err != nil { // before Open, so that READY is seen
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background()) // a real bot: signal.NotifyContext
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }() // until ctx is done
	if err := session.Open(); err != nil {
		panic(err)
	}

	r := <-posted
	fmt.Printf("posted %d servers on %d shard\n", r.Servers, r.Shards)
	v := <-rewarded
	fmt.Printf("rewarded Discord user %s\n", v.PlatformID)

	cmds, ok := listing.Commands()
	for i := 0; !ok && i < 500; i++ { // published on the first READY, beside the post (bounded: 5 s)
		time.Sleep(10 * time.Millisecond)
		cmds, ok = listing.Commands()
	}
	fmt.Printf("published %s\n", cmds)

	stop()
	if err := <-ran; err != nil { // Run returns once the jobs stopped and the vote state is saved
		panic(err)
	}
	_ = session.Close()
	// Output:
	// posted 2 servers on 1 shard
	// rewarded Discord user 300000000000000001
	// published [{"description":"Vote for the bot","name":"vote","type":1}]
}

// One process of a bot whose 6 shards run in three processes sharing Redis
// (the lease and the state): this one runs shards 2 and 3. Every process
// reports its shards and mirrors the votes; whichever leads posts the exact
// total, publishes the commands and delivers the votes. (Not run: it needs
// Discord, Top.gg and Redis.)
func ExampleWithFleet() {
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	const bot = "123456789012345678"
	rdb, err := fleet.NewUniversalClient(os.Getenv("REDIS_URL"))
	if err != nil {
		log.Fatal(err) // never shows the Redis password
	}
	defer rdb.Close() // after Run returned
	f, err := fleet.New(rdb, fleet.Config{Bot: bot, ShardCount: 6})
	if err != nil {
		log.Fatal(err)
	}
	state, err := redisstate.New(rdb, bot) // the votes, the command hash, the reminder opt-ins
	if err != nil {
		log.Fatal(err)
	}
	p, err := plugin.New(client, plugin.Config{}, plugin.WithFleet(f), plugin.WithState(state))
	if err != nil {
		log.Fatal(err)
	}
	var sessions []*discordgo.Session
	for _, shard := range []int{2, 3} {
		s, err := discordgo.New("Bot " + os.Getenv("DISCORD_TOKEN"))
		if err != nil {
			log.Fatal(err)
		}
		s.ShardID, s.ShardCount = shard, 6
		sessions = append(sessions, s)
	}
	if err := p.Attach(sessions...); err != nil {
		log.Fatal(err)
	}
	// Open the sessions, then run until the bot stops.
	if err := p.Run(context.Background()); err != nil {
		log.Print(err)
	}
}

// A bot whose voters get a role while their vote is active, a reminder when
// they can vote again (if they ask with /vote remind:True), /vote and
// /leaderboard, and a /premium command for voters only. (Not run: it needs
// Discord and Top.gg; voterperks's Examples run against the fakes.)
func ExampleWithVoterPerks() {
	const botID, guildID, roleID = "123456789012345678", "223456789012345678", "323456789012345678"
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	group, err := shards.New(os.Getenv("DISCORD_TOKEN"), 1)
	if err != nil {
		log.Fatal(err)
	}
	defer group.Close() // after Run returned
	// The votes, the command hash and the reminder opt-ins.
	state, err := boltstate.Open("topgg-state")
	if err != nil {
		log.Fatal(err)
	}
	defer state.Close() // after Run returned
	p, err := plugin.New(client, plugin.Config{}, plugin.WithState(state),
		plugin.WithCommands([]*discordgo.ApplicationCommand{{Name: "premium", Description: "For voters only"}}),
		plugin.WithVoterPerks(plugin.VoterPerks{
			BotID: botID, Role: &voterperks.Role{GuildID: guildID, RoleID: roleID}, Reminders: true,
		}))
	if err != nil {
		log.Fatal(err)
	}
	premium := func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		_ = s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "Thank you for voting: here it is."},
		})
	}
	for _, s := range group.Sessions() {
		s.AddHandler(p.Perks().Gate(premium, "premium"))
	}
	// Attach adds the /vote and /leaderboard handler.
	if err := p.Attach(group.Sessions()...); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// /premium, /vote and /leaderboard on Discord, as the listing gets them.
	if err := p.RegisterCommands(ctx, botID); err != nil {
		log.Fatal(err)
	}
	if err := group.Open(ctx); err != nil {
		log.Fatal(err)
	}
	if err := p.Run(ctx); err != nil {
		log.Print(err)
	}
}

// A bot that keeps its votes in its own PostgreSQL database and pays each
// vote in coins exactly once: the credit and the delivered mark commit in
// one transaction, through any crash. (Not run: it needs Top.gg and
// PostgreSQL.)
func ExampleWithState_postgres() {
	ctx := context.Background()
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	pool, err := pgstore.Connect(ctx, os.Getenv("DATABASE_URL")) // never shows the password
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close() // after Run returned
	store, err := pgstore.Open(ctx, pool, pgstore.Config{})
	if err != nil {
		log.Fatal(err)
	}
	credit := store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		_, err := tx.Exec(ctx, `INSERT INTO wallets (user_id, coins) VALUES ($1, $2)
			ON CONFLICT (user_id) DO UPDATE SET coins = wallets.coins + EXCLUDED.coins`, v.PlatformID, 100*v.Weight)
		return err
	})
	p, err := plugin.New(client, plugin.Config{}, plugin.WithState(store), plugin.WithRewardHandler(credit))
	if err != nil {
		log.Fatal(err)
	}
	// Attach the sessions, open them, then run until the bot stops.
	if err := p.Run(ctx); err != nil {
		log.Print(err)
	}
}

// One process of a fleet whose state is in PostgreSQL: every process opens
// the same store, and New fences it by the fleet's lease, so that only the
// current leader's writes commit. (Not run: it needs Top.gg, Redis and
// PostgreSQL.)
func ExampleWithFleet_postgres() {
	ctx := context.Background()
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	const lease = 15 * time.Second
	f, err := fleet.Open(os.Getenv("REDIS_URL"), fleet.Config{Bot: "123456789012345678", ShardCount: 6, LeaseTTL: lease})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close() // after Run returned
	pool, err := pgstore.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	// A paused leader holds its transactions' locks no longer than its term.
	store, err := pgstore.Open(ctx, pool, pgstore.Config{TxTimeout: lease})
	if err != nil {
		log.Fatal(err)
	}
	p, err := plugin.New(client, plugin.Config{}, plugin.WithFleet(f), plugin.WithState(store),
		plugin.WithRewardHandler(store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			_, err := tx.Exec(ctx, `UPDATE wallets SET coins = coins + $2 WHERE user_id = $1`, v.PlatformID, 100*v.Weight)
			return err
		})))
	if err != nil {
		log.Fatal(err)
	}
	// Attach this process's sessions, open them, then run until the bot stops.
	if err := p.Run(ctx); err != nil {
		log.Print(err)
	}
}
