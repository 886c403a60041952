package plugin_test

import (
	"context"
	"log"
	"os"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/topgg"
)

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
