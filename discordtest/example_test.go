package discordtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/discordtest"
)

// A real discordgo session opens against the fake, receives its guilds,
// then sees the bot join one more and lose one to an outage.
func Example() {
	g1, g2, g3 := discordtest.GuildIDForShard(0, 0, 1), discordtest.GuildIDForShard(1, 0, 1), discordtest.GuildIDForShard(2, 0, 1)
	srv, err := discordtest.NewServer(discordtest.WithGuilds(g1, g2))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close() // after the session's Close

	s, err := srv.NewSession(0, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	s.SyncEvents = true // handlers in event order
	events := make(chan string, 10)
	s.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) { events <- "GUILD_CREATE " + g.ID })
	s.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildDelete) {
		events <- fmt.Sprintf("GUILD_DELETE %s unavailable=%t", g.ID, g.Unavailable)
	})
	if err := s.Open(); err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Join(ctx, g3)
	_ = srv.Outage(ctx, g1)
	for range 4 {
		select {
		case e := <-events:
			fmt.Println(e)
		case <-ctx.Done():
			fmt.Println(ctx.Err())
			return
		}
	}
	// Output:
	// GUILD_CREATE 794354201395200000
	// GUILD_CREATE 794354201399394304
	// GUILD_CREATE 794354201403588608
	// GUILD_DELETE 794354201395200000 unavailable=true
}
