package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/voterperks"
)

// Shutdown bounds, as SIGTERM must end the process within 10 s: running vote
// handlers get pluginCloseTimeout (then their context is cancelled); the
// shards close once the jobs stopped, or after jobsFirst; discordgo's Close
// then takes a second.
const (
	shutdownBudget     = 8 * time.Second
	pluginCloseTimeout = 4 * time.Second
	jobsFirst          = pluginCloseTimeout + time.Second
)

// bot is a running example bot: one discordgo session per shard and the plugin.
type bot struct {
	cfg    config
	log    *slog.Logger
	shards *shards.Group
	plugin *plugin.Plugin
	botID  string
	points *pointsStore // nil: no points (see points.go)
}

// runBot runs the bot until ctx is done, then shuts it down; a ctx done during
// the start is a clean stop. made, when not nil, is handed the plugin before
// it runs: the demo finds the webhook receiver's address through it.
func runBot(ctx context.Context, cfg config, log *slog.Logger, made func(*plugin.Plugin)) error {
	client, ops, err := newClient(cfg, log) // ops: nil without METRICS_ADDR (metrics.go)
	if err != nil {
		return err
	}
	opts := []shards.Option{shards.WithAPIBase(cfg.DiscordAPIURL), shards.WithLogger(log)}
	if cfg.ShardIDs != nil {
		opts = append(opts, shards.WithShardIDs(cfg.ShardIDs...))
	}
	group, err := shards.New(cfg.DiscordToken.Reveal(), cfg.ShardCount, opts...)
	if err != nil {
		return fmt.Errorf("discord sessions: %w", err)
	}
	b := &bot{cfg: cfg, log: log, shards: group}
	for _, s := range group.Sessions() {
		// Nothing the bot runs reads discordgo's State, a third of the memory
		// at 100,000 guilds (READY's session id, which autopost reads, is kept).
		s.StateEnabled = false
	}
	stoppedEarly := func(err error) error {
		err = errors.Join(err, group.Close())
		if ctx.Err() != nil {
			log.Info("stopped before going online")
			return nil
		}
		return err
	}
	// The commands go to Discord first, then (on READY) the same definitions to Top.gg.
	defs, err := b.registerCommands(ctx)
	if err != nil {
		return stoppedEarly(err)
	}
	popts := []plugin.Option{plugin.WithLogger(log), plugin.WithCommands(defs)}
	if ops != nil {
		popts = append(popts, plugin.WithMetrics(ops.metrics))
	}
	fl, err := openFleet(cfg, b.botID, log)
	if err != nil {
		return stoppedEarly(err)
	}
	if fl != nil {
		defer fl.Close() // after the plugin's Run returned (see serve)
		popts = append(popts, plugin.WithFleet(fl))
		log.Info("fleet mode: sharing counts and leadership through Redis", "shards", group, "lease", cfg.FleetLease)
	}
	pointOpts, err := b.openPoints(ctx, fl) // nil, and no points, with vote polling off
	if err != nil {
		return stoppedEarly(err)
	}
	if b.points != nil {
		defer b.points.close() // after the plugin's Run returned
		popts = append(append(popts, pointOpts...), plugin.WithVoterPerks(b.perks()))
	}
	// The running handlers get at most pluginCloseTimeout once the stop comes,
	// whatever TOPGG_VOTE_STOP_GRACE says: SIGTERM must end the bot within 10 s.
	pcfg := cfg.Plugin
	pcfg.VoteStopGrace = min(cmp.Or(pcfg.VoteStopGrace, pluginCloseTimeout), pluginCloseTimeout)
	if b.plugin, err = plugin.New(client, pcfg, popts...); err != nil {
		return stoppedEarly(err)
	}
	if made != nil {
		made(b.plugin)
	}
	for _, s := range group.Sessions() {
		s.AddHandler(b.plugin.Perks().Handle) // /vote and /leaderboard; a nil Perks answers nothing
	}
	// Attached and serving before the sessions open: /readyz answers 503
	// until every shard has its READY.
	if err := b.plugin.Attach(group.Sessions()...); err != nil {
		return stoppedEarly(err)
	}
	stopOps, err := ops.start(ctx, b.plugin, log)
	if err != nil {
		return stoppedEarly(err)
	}
	return errors.Join(b.serve(ctx), stopOps()) // probes answer until the bot is down
}

// registerCommands reads the bot's application (setting b.botID) and puts the
// bot's slash commands on Discord; it returns their definitions.
func (b *bot) registerCommands(ctx context.Context) ([]*discordgo.ApplicationCommand, error) {
	s0 := b.shards.Sessions()[0]
	// discordgo's Application takes no request options, so no context.
	body, err := s0.RequestWithBucketID(http.MethodGet, discordgo.EndpointOAuth2Application("@me"), nil,
		discordgo.EndpointOAuth2Application(""), discordgo.WithContext(ctx))
	var app discordgo.Application
	if err == nil {
		if err = json.Unmarshal(body, &app); err == nil && app.ID == "" {
			err = errors.New("the application Discord sent has no id")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the Discord application: %w", err)
	}
	b.botID = app.ID
	defs := []*discordgo.ApplicationCommand{}
	if b.cfg.votesOn() {
		defs = voterperks.Commands(voterperks.Texts{})
	}
	if _, err := s0.ApplicationCommandBulkOverwrite(app.ID, "", defs, discordgo.WithContext(ctx)); err != nil {
		return nil, fmt.Errorf("registering slash commands on Discord: %w", err)
	}
	b.log.Info("registered slash commands on Discord", "commands", len(defs))
	return defs, nil
}

// serve runs the plugin and opens the shards, waits until ctx is done or the
// plugin fails (a state directory in use, a refused token), then stops the
// jobs (saving the vote state) and closes the shards, within shutdownBudget.
func (b *bot) serve(ctx context.Context) error {
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
	openErr := b.shards.Open(online)
	switch {
	case online.Err() != nil:
		// Open returned because of the stop (or a failed plugin, which the
		// shutdown reports): not a failure of its own.
		b.log.Info("stopped before going online; shutting down")
		openErr = nil
	case openErr == nil:
		b.log.Info("bot is online", "shards", b.shards)
		<-online.Done()
		b.log.Info("shutting down")
	}
	stopJobs := func() error { stopRun(); return <-ran }
	closeShards := func() error {
		err := b.shards.Close()
		b.log.Info("gateway connections closed")
		return err
	}
	return errors.Join(openErr, stopAll(stopJobs, closeShards, shutdownBudget, jobsFirst))
}

// stopAll runs stopJobs, then closeShards once the jobs have stopped or after
// jobsFirst: no post sees the shards vanish, and a slow job does not keep them
// open. It returns within budget, saying which step still runs then (its
// goroutine is left to the process's exit).
func stopAll(stopJobs, closeShards func() error, budget, jobsFirst time.Duration) error {
	deadline := time.After(budget)
	jobs, shards := make(chan error, 1), make(chan error, 1)
	go func() { jobs <- stopJobs() }()
	select {
	case err := <-jobs:
		jobs <- err // read again below
	case <-time.After(jobsFirst):
	}
	go func() { shards <- closeShards() }()
	var errs [2]error
	for i, step := range []struct {
		done <-chan error
		late string
	}{{shards, "the shards did not close"}, {jobs, "the jobs did not stop"}} {
		select {
		case errs[i] = <-step.done:
		case <-deadline:
			return fmt.Errorf("shutdown took longer than %s: %s", budget, step.late)
		}
	}
	return errors.Join(errs[1], errs[0])
}
