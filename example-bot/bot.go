package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
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
	// closers close the fleet and the points after the plugin's Run returned.
	closers []func() error
}

// runBot runs the bot until ctx is done, then shuts it down; a ctx done during
// the start is a clean stop. made, when not nil, is handed the plugin before
// it runs: the demo finds the webhook receiver's address through it.
func runBot(ctx context.Context, cfg config, log *slog.Logger, made func(*plugin.Plugin)) error {
	client, ops, err := newClient(cfg, log) // ops: nil without METRICS_ADDR (metrics.go)
	if err != nil {
		return err
	}
	group, err := shards.New(cfg.DiscordToken.Reveal(), cfg.ShardCount,
		shards.WithAPIBase(cfg.DiscordAPIURL), shards.WithLogger(log), cfg.ShardIDs.Option())
	if err != nil {
		return fmt.Errorf("discord sessions: %w", err)
	}
	b := &bot{cfg: cfg, log: log, shards: group}
	defer func() {
		for _, c := range b.closers {
			_ = c()
		}
	}()
	stopOps := func() error { return nil }
	if err = b.start(ctx, client, ops); err == nil {
		if made != nil {
			made(b.plugin)
		}
		stopOps, err = ops.start(ctx, b.plugin, log)
	}
	if err != nil {
		err = errors.Join(err, group.Close())
		if ctx.Err() != nil {
			log.Info("stopped before going online")
			return nil
		}
		return err
	}
	// The jobs stop (saving the vote state) before the shards close; the
	// probes answer until the bot is down.
	return errors.Join(group.Serve(ctx, b.plugin.Run, shards.Shutdown{JobsFirst: jobsFirst, Budget: shutdownBudget}), stopOps())
}

// start registers the commands, opens the fleet and the points, makes the
// plugin and attaches the sessions to it.
func (b *bot) start(ctx context.Context, client *topgg.Client, ops *ops) error {
	// The commands go to Discord first, then (on READY) the same definitions to Top.gg.
	defs, err := b.registerCommands(ctx)
	if err != nil {
		return err
	}
	popts := []plugin.Option{plugin.WithLogger(b.log), plugin.WithCommands(defs)}
	if ops != nil {
		popts = append(popts, plugin.WithMetrics(ops.metrics))
	}
	var fl *fleet.Fleet // connected lazily; closed after the plugin's Run returned
	if b.cfg.fleetMode() {
		c := b.cfg
		fl, err = fleet.Open(c.RedisURL.Reveal(), fleet.Config{Bot: b.botID, ShardCount: c.ShardCount, LeaseTTL: c.FleetLease, Logger: b.log})
		if err != nil {
			return err
		}
		b.closers = append(b.closers, fl.Close)
		popts = append(popts, plugin.WithFleet(fl))
		b.log.Info("fleet mode: sharing counts and leadership through Redis", "shards", b.shards, "lease", b.cfg.FleetLease)
	}
	pointOpts, err := b.openPoints(ctx, fl)
	if err != nil {
		return err
	}
	if b.cfg.Plugin.PollsVotes() {
		popts = append(append(popts, pointOpts...), plugin.WithVoterPerks(b.perks()))
	}
	// The running handlers get at most pluginCloseTimeout once the stop comes,
	// whatever TOPGG_VOTE_STOP_GRACE says: SIGTERM must end the bot within 10 s.
	pcfg := b.cfg.Plugin
	pcfg.VoteStopGrace = min(cmp.Or(pcfg.VoteStopGrace, pluginCloseTimeout), pluginCloseTimeout)
	if b.plugin, err = plugin.New(client, pcfg, popts...); err != nil {
		return err
	}
	for _, s := range b.shards.Sessions() {
		// Nothing the bot runs reads discordgo's State, a third of the memory
		// at 100,000 guilds (READY's session id, which autopost reads, is kept).
		s.StateEnabled = false
		s.AddHandler(b.plugin.Perks().Handle) // /vote and /leaderboard; a nil Perks answers nothing
	}
	// Attached and serving (ops) before the sessions open: /readyz answers
	// 503 until every shard has its READY.
	return b.plugin.Attach(b.shards.Sessions()...)
}

// registerCommands reads the bot's application (setting b.botID) and puts the
// bot's slash commands on Discord; it returns their definitions.
func (b *bot) registerCommands(ctx context.Context) ([]*discordgo.ApplicationCommand, error) {
	app, err := b.shards.Application(ctx)
	if err != nil {
		return nil, err
	}
	b.botID = app.ID
	defs := []*discordgo.ApplicationCommand{}
	if b.cfg.Plugin.PollsVotes() {
		defs = voterperks.Commands(voterperks.Texts{})
	}
	if _, err := b.shards.Sessions()[0].ApplicationCommandBulkOverwrite(app.ID, "", defs, discordgo.WithContext(ctx)); err != nil {
		return nil, fmt.Errorf("registering slash commands on Discord: %w", err)
	}
	b.log.Info("registered slash commands on Discord", "commands", len(defs))
	return defs, nil
}
