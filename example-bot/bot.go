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

// Shutdown bounds. SIGTERM must end the process within 10 s: the whole shutdown
// gets shutdownBudget; the vote handlers that are running get pluginCloseTimeout
// to finish (then their context is cancelled); the shards are closed once the
// jobs stopped, or after jobsFirst at the latest, so that a slow job never keeps
// them open; discordgo's Close then takes a second.
const (
	shutdownBudget     = 8 * time.Second
	pluginCloseTimeout = 4 * time.Second
	jobsFirst          = pluginCloseTimeout + time.Second
	// openAbortGrace bounds the wait for an aborted Open to return.
	openAbortGrace = 2 * time.Second
)

// bot is a running example bot: one discordgo session per shard and the plugin.
type bot struct {
	cfg      config
	log      *slog.Logger
	sessions []*discordgo.Session
	dialers  []*gatewayDialer // one per session
	stuck    []bool           // a session whose aborted Open never returned: its lock is held
	plugin   *plugin.Plugin
	botID    string
}

// runBot runs the bot until ctx is done, then shuts it down. hc, when not nil, is the
// HTTP client for Discord's REST calls (the demo passes the fake's). A ctx done
// during the start is a clean stop, not an error.
func runBot(ctx context.Context, cfg config, log *slog.Logger, hc *http.Client) error {
	client, err := topgg.New(cfg.TopggToken.Reveal(), topgg.WithBaseURL(cfg.TopggAPIURL), topgg.WithLogger(log))
	if err != nil {
		return err
	}
	if hc == nil {
		hc = &http.Client{Timeout: 20 * time.Second, Transport: http.DefaultTransport}
	}
	hc = &http.Client{Timeout: hc.Timeout, Transport: &gatewayLookup{ctx: ctx, next: newAPIRewriter(cfg.DiscordAPIURL, transportOf(hc))}}

	b := &bot{cfg: cfg, log: log, stuck: make([]bool, cfg.ShardCount)}
	for i := range cfg.ShardCount {
		s, err := discordgo.New("Bot " + cfg.DiscordToken.Reveal())
		if err != nil {
			return fmt.Errorf("discord session: %w", err)
		}
		d := newGatewayDialer(ctx)
		s.Client, s.Dialer = hc, d.websocketDialer()
		s.ShardID, s.ShardCount = i, cfg.ShardCount
		s.Identify.Shard = &[2]int{i, cfg.ShardCount}
		s.Identify.Intents = discordgo.IntentsGuilds
		s.AddHandler(b.onInteraction)
		b.sessions = append(b.sessions, s)
		b.dialers = append(b.dialers, d)
	}
	stoppedEarly := func(err error) error {
		if ctx.Err() != nil {
			log.Info("stopped before going online")
			return nil
		}
		return err
	}

	// The commands go to Discord first, then (on READY) the same definitions to Top.gg.
	app, err := fetchApplication(ctx, log, b.sessions[0])
	if err != nil {
		return stoppedEarly(fmt.Errorf("reading the Discord application: %w", err))
	}
	b.botID = app.ID
	defs := []*discordgo.ApplicationCommand{&voteCommand}
	err = restCall(ctx, log, func(opts ...discordgo.RequestOption) error {
		_, err := b.sessions[0].ApplicationCommandBulkOverwrite(app.ID, "", defs, opts...)
		return err
	})
	if err != nil {
		return stoppedEarly(fmt.Errorf("registering slash commands on Discord: %w", err))
	}
	log.Info("registered slash commands on Discord", "commands", len(defs))

	opts := []plugin.Option{plugin.WithLogger(log), plugin.WithCommands(defs)}
	r := &rewards{bot: b, log: log}
	opts = append(opts, plugin.WithRewardHandler(r.onVote), plugin.WithExpiryHandler(r.onExpire))
	// The running handlers get at most pluginCloseTimeout once the stop comes,
	// whatever TOPGG_VOTE_STOP_GRACE says: SIGTERM must end the bot within 10 s.
	pcfg := cfg.Plugin
	if pcfg.VoteStopGrace == 0 || pcfg.VoteStopGrace > pluginCloseTimeout {
		pcfg.VoteStopGrace = pluginCloseTimeout
	}
	if b.plugin, err = plugin.New(client, pcfg, opts...); err != nil {
		return err
	}
	if err := b.plugin.Attach(b.sessions...); err != nil {
		return err
	}
	// The plugin runs until the shutdown stops it, jobs first; if it fails (a
	// state directory in use, a refused token), the bot stops too.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	online, pluginFailed := context.WithCancel(ctx)
	defer pluginFailed()
	ran := make(chan error, 1)
	go func() {
		err := b.plugin.Run(runCtx)
		if err != nil {
			pluginFailed()
		}
		ran <- err
	}()
	stopJobs := func() error { stopRun(); return <-ran }

	openErr := b.open(online)
	switch {
	case openErr != nil:
	case online.Err() != nil:
		log.Info("stopped before going online; shutting down")
	default:
		log.Info("bot is online", "shards", cfg.ShardCount)
		<-online.Done()
		log.Info("shutting down")
	}
	return errors.Join(openErr, b.shutdown(stopJobs))
}

// open connects every shard; discordgo's Open returns once the shard has its
// READY. When ctx is done first, the pending Open is aborted and open returns nil.
func (b *bot) open(ctx context.Context) error {
	for i, s := range b.sessions {
		if ctx.Err() != nil {
			return nil
		}
		errc := make(chan error, 1)
		go func() { errc <- s.Open() }()
		var err error
		select {
		case err = <-errc:
		case <-ctx.Done():
			select {
			case err = <-errc: // it ended anyway
			default:
				b.dialers[i].abort()
				select {
				case <-errc:
				case <-time.After(openAbortGrace):
					b.stuck[i] = true
					return fmt.Errorf("opening shard %d: still waiting on Discord %s after the stop", s.ShardID, openAbortGrace)
				}
				return nil
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("opening shard %d: %w", s.ShardID, err)
		}
	}
	return nil
}

// shutdown stops the jobs (saving the vote state) and closes the shards, within
// shutdownBudget.
func (b *bot) shutdown(stopJobs func() error) error {
	return stopAll(stopJobs, b.closeShards, shutdownBudget, jobsFirst)
}

// closeShards closes the shards at once: discordgo's Close sleeps a second per
// session.
func (b *bot) closeShards() error {
	var wg sync.WaitGroup
	for i, s := range b.sessions {
		if !b.stuck[i] {
			wg.Go(func() { _ = s.Close() })
		}
	}
	wg.Wait()
	b.log.Info("gateway connections closed")
	return nil
}

// stopAll runs stopJobs, then closeShards once the jobs have stopped or after
// jobsFirst, whichever comes first: the jobs go first, so that no post sees the
// shards vanish, but a job that is slow to stop does not keep the shards open.
// It returns within budget: if a step is still running then, it says which (the
// step's goroutine is left to the process's exit).
func stopAll(stopJobs, closeShards func() error, budget, jobsFirst time.Duration) error {
	deadline := time.NewTimer(budget)
	defer deadline.Stop()
	jobsDone := make(chan error, 1)
	go func() { jobsDone <- stopJobs() }()

	var jobsErr error
	jobsStopped := false
	first := time.NewTimer(jobsFirst)
	defer first.Stop()
	select {
	case jobsErr = <-jobsDone:
		jobsStopped = true
	case <-first.C:
	}

	shardsDone := make(chan error, 1)
	go func() { shardsDone <- closeShards() }()
	var shardsErr error
	select {
	case shardsErr = <-shardsDone:
	case <-deadline.C:
		return fmt.Errorf("shutdown took longer than %s: the shards did not close", budget)
	}
	if !jobsStopped {
		select {
		case jobsErr = <-jobsDone:
		case <-deadline.C:
			return fmt.Errorf("shutdown took longer than %s: the jobs did not stop", budget)
		}
	}
	return errors.Join(jobsErr, shardsErr)
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
