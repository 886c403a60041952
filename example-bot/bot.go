package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
)

// voteCommand is the bot's one slash command.
var voteCommand = discordgo.ApplicationCommand{
	Name:        "vote",
	Description: "Get the link to vote for this bot on Top.gg, and see whether your vote is active",
}

// shutdownBudget bounds the whole shutdown, so that SIGTERM exits well within 10 s.
const shutdownBudget = 8 * time.Second

// bot is a running example bot: one discordgo session per shard and the plugin.
type bot struct {
	cfg      config
	log      *slog.Logger
	sessions []*discordgo.Session
	plugin   *plugin.Plugin
	botID    string
}

// runBot runs the bot until ctx is done, then shuts it down. hc, when not nil, is the
// HTTP client for Discord's REST calls (the demo passes the fake's).
func runBot(ctx context.Context, cfg config, log *slog.Logger, hc *http.Client) error {
	client, err := topgg.New(cfg.TopggToken, topgg.WithBaseURL(cfg.TopggAPIURL), topgg.WithLogger(log))
	if err != nil {
		return err
	}
	if hc == nil {
		hc = &http.Client{Timeout: 20 * time.Second, Transport: http.DefaultTransport}
	}
	hc = &http.Client{Timeout: hc.Timeout, Transport: newAPIRewriter(cfg.DiscordAPIURL, transportOf(hc))}

	b := &bot{cfg: cfg, log: log}
	for i := range cfg.ShardCount {
		s, err := discordgo.New("Bot " + cfg.DiscordToken)
		if err != nil {
			return fmt.Errorf("discord session: %w", err)
		}
		s.Client = hc
		s.ShardID, s.ShardCount = i, cfg.ShardCount
		s.Identify.Shard = &[2]int{i, cfg.ShardCount}
		s.Identify.Intents = discordgo.IntentsGuilds
		s.AddHandler(b.onInteraction)
		b.sessions = append(b.sessions, s)
	}

	// The commands go to Discord first, then (on READY) the same definitions to Top.gg.
	// discordgo's Application takes no context; the client's timeout bounds it.
	app, err := b.sessions[0].Application("@me")
	if err != nil {
		return fmt.Errorf("reading the Discord application: %w", err)
	}
	b.botID = app.ID
	defs := []*discordgo.ApplicationCommand{&voteCommand}
	if _, err := b.sessions[0].ApplicationCommandBulkOverwrite(app.ID, "", defs, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("registering slash commands on Discord: %w", err)
	}
	log.Info("registered slash commands on Discord", "commands", len(defs))

	opts := []plugin.Option{plugin.WithLogger(log), plugin.WithCommands(defs)}
	r := &rewards{bot: b, log: log}
	opts = append(opts, plugin.WithRewardHandler(r.onVote), plugin.WithExpiryHandler(r.onExpire))
	if b.plugin, err = plugin.New(client, cfg.Plugin, opts...); err != nil {
		return err
	}
	b.plugin.Attach(b.sessions...)
	if err := b.plugin.Start(ctx); err != nil {
		return err
	}

	openErr := b.open(ctx)
	if openErr == nil {
		log.Info("bot is online", "shards", cfg.ShardCount)
		<-ctx.Done()
		log.Info("shutting down")
	}
	return errors.Join(openErr, b.shutdown())
}

// open connects every shard; discordgo's Open returns once the shard has its READY.
func (b *bot) open(ctx context.Context) error {
	for _, s := range b.sessions {
		if err := ctx.Err(); err != nil {
			return nil
		}
		if err := s.Open(); err != nil {
			return fmt.Errorf("opening shard %d: %w", s.ShardID, err)
		}
	}
	return nil
}

// shutdown stops the jobs (saving the vote state), then closes the shards at once:
// discordgo's Close sleeps a second per session.
func (b *bot) shutdown() error {
	done := make(chan error, 1)
	go func() {
		err := b.plugin.Close()
		var wg sync.WaitGroup
		for _, s := range b.sessions {
			wg.Go(func() { _ = s.Close() })
		}
		wg.Wait()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(shutdownBudget):
		return fmt.Errorf("shutdown took longer than %s", shutdownBudget)
	}
}

// shardFor returns the session of the shard that holds guildID.
func (b *bot) shardFor(guildID string) (*discordgo.Session, error) {
	n, err := strconv.ParseUint(guildID, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("guild id %q: %w", guildID, err)
	}
	return b.sessions[(n>>22)%uint64(len(b.sessions))], nil
}

// onInteraction answers /vote from the vote cache, without a request to Top.gg.
func (b *bot) onInteraction(s *discordgo.Session, i *discordgo.InteractionCreate) {
	if i.Type != discordgo.InteractionApplicationCommand || i.ApplicationCommandData().Name != voteCommand.Name {
		return
	}
	user := i.User
	if i.Member != nil {
		user = i.Member.User
	}
	if user == nil {
		return
	}
	msg := fmt.Sprintf("Vote for me on Top.gg: https://top.gg/bot/%s/vote", b.botID)
	switch st := b.plugin.Active(user.ID); {
	case st.Active:
		msg += fmt.Sprintf("\nYour vote is active until <t:%d:t>. Thank you!", st.Until.Unix())
	case st.Covered:
		msg += "\nYou have no active vote right now."
	default:
		msg += "\nI am still reading the vote history; ask again in a minute to see your vote."
	}
	err := s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: msg, Flags: discordgo.MessageFlagsEphemeral},
	})
	if err != nil {
		b.log.Warn("could not answer /vote", "user", user.ID, "error", err)
		return
	}
	b.log.Info("answered /vote", "user", user.ID)
}

func transportOf(hc *http.Client) http.RoundTripper {
	if hc.Transport != nil {
		return hc.Transport
	}
	return http.DefaultTransport
}
