package commands_test

import (
	"context"
	"fmt"
	"log"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// A bot publishes the commands it registers on Discord. The second Sync of
// the same commands sends nothing. The fake service stands in for Top.gg.
func ExampleSyncer_Sync() {
	srv, err := topggtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	syncer, err := commands.New(client, commands.Config{}) // or Store: the bot's state, such as a boltstate.State
	if err != nil {
		log.Fatal(err)
	}

	cmds := []*discordgo.ApplicationCommand{{
		ID:          "1200000000000000001", // assigned by Discord; not published
		Name:        "vote",
		Description: "Vote for the bot",
		Options: []*discordgo.ApplicationCommandOption{{
			Type:        discordgo.ApplicationCommandOptionBoolean,
			Name:        "remind",
			Description: "Remind me in 12 hours",
		}},
	}}
	ctx := context.Background()
	for range 2 {
		res, err := syncer.Sync(ctx, cmds)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s commands=%d\n", res.Outcome, res.Commands)
	}
	listing, _ := srv.Commands()
	fmt.Println(string(listing))
	// Output:
	// published commands=1
	// unchanged commands=1
	// [{"description":"Vote for the bot","name":"vote","options":[{"description":"Remind me in 12 hours","name":"remind","type":5}],"type":1}]
}

// Normalize shows what is published for a command: Discord's ids are gone,
// members are sorted, and the type defaults to a chat-input command.
func ExampleNormalize() {
	defs, err := commands.Normalize([]*discordgo.ApplicationCommand{{
		ID:            "1200000000000000001",
		ApplicationID: "264811613708746752",
		Version:       "1200000000000000010",
		Name:          "ping",
		Description:   "Check that the bot is alive",
		NameLocalizations: &map[discordgo.Locale]string{
			discordgo.French: "latence",
			discordgo.German: "latenz",
		},
	}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(defs[0]))
	// Output:
	// {"description":"Check that the bot is alive","name":"ping","name_localizations":{"de":"latenz","fr":"latence"},"type":1}
}

// Run publishes the bot's commands when it starts and checks them again
// every Interval, reporting each outcome; it runs until its context ends.
func ExampleSyncer_Run() {
	srv, err := topggtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	synced := make(chan error, 1)
	job, err := commands.New(client, commands.Config{
		Commands: []*discordgo.ApplicationCommand{{Name: "vote", Description: "Vote for the bot"}},
		// or Session: a session of the bot, to publish what Discord has.
		OnResult: func(_ context.Context, _ commands.Result, err error) { synced <- err },
	})
	if err != nil {
		log.Fatal(err) // also a command that breaks one of Discord's rules
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()

	fmt.Println("first sync:", <-synced)
	cancel()
	fmt.Println("Run returned:", <-done)
	// Output:
	// first sync: <nil>
	// Run returned: <nil>
}
