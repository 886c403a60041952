package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/plugin/deploy"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
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

// bot is the example bot: one discordgo session per shard, the plugin, and
// what the environment names (the state, the fleet, the points).
type bot struct {
	cfg    config
	log    *slog.Logger
	client *topgg.Client
	ops    *ops // nil without METRICS_ADDR (metrics.go)
	shards *shards.Group
	dep    *deploy.Deployment
	plugin *plugin.Plugin
	points *pointsStore // nil: no points (points.go)
}

// newBot makes the client, the shards and the metrics registry, and checks
// what the deployment will open: every value the environment gives is
// checked here, before any request (a *plugin.ConfigError names its variable).
func newBot(cfg config, env envconfig.Lookuper, log *slog.Logger) (*bot, error) {
	b := &bot{cfg: cfg, log: log}
	var err error
	b.client, b.ops, err = newClient(cfg, log)
	if err == nil {
		err = plugin.ValidateEnv(cfg, env, b.client) // the interval floors, which depend on the client
	}
	if err == nil {
		err = deploy.Check(cfg.Env)
	}
	if err == nil {
		b.shards, err = cfg.Shards(shards.WithLogger(log))
	}
	return b, err
}

// run runs the bot until ctx is done, then shuts it down; a ctx done during
// the start is a clean stop. made, when not nil, is handed the plugin before
// it runs: the demo finds the webhook receiver's address through it.
func (b *bot) run(ctx context.Context, made func(*plugin.Plugin)) error {
	defer b.close()
	stopOps := func() error { return nil }
	err := b.start(ctx)
	if err == nil {
		if made != nil {
			made(b.plugin)
		}
		stopOps, err = b.ops.start(ctx, b.plugin, b.log)
	}
	if err != nil {
		err = errors.Join(err, b.shards.Close())
		if ctx.Err() != nil {
			b.log.Info("stopped before going online")
			return nil
		}
		return err
	}
	// The jobs stop (saving the vote state) before the shards close; the
	// probes answer until the bot is down.
	return errors.Join(b.shards.Serve(ctx, b.plugin.Run, shards.Shutdown{JobsFirst: jobsFirst, Budget: shutdownBudget}), stopOps())
}

// start opens the deployment and the points, makes the plugin, attaches the
// sessions and registers the slash commands on Discord (on READY the plugin
// publishes the same to Top.gg).
func (b *bot) start(ctx context.Context) error {
	app, err := b.shards.Application(ctx)
	if err != nil {
		return err
	}
	if b.dep, err = deploy.Open(ctx, b.cfg.Env, app.ID, b.log); err != nil {
		return err
	}
	if b.dep.Fleet != nil {
		b.log.Info("fleet mode: sharing counts and leadership through Redis", "shards", b.shards, "lease", b.cfg.FleetLease)
	}
	opts := append(b.dep.Options(), plugin.WithLogger(b.log), plugin.WithCommands([]*discordgo.ApplicationCommand{}))
	if b.ops != nil {
		opts = append(opts, plugin.WithMetrics(b.ops.metrics))
	}
	if b.cfg.Config.PollsVotes() {
		pointOpts, err := b.openPoints(ctx)
		if err != nil {
			return err
		}
		opts = append(append(opts, pointOpts...), plugin.WithVoterPerks(b.perks(app.ID)))
	}
	// The running handlers get at most pluginCloseTimeout once the stop comes,
	// whatever TOPGG_VOTE_STOP_GRACE says: SIGTERM must end the bot within 10 s.
	pcfg := b.cfg.Config
	pcfg.VoteStopGrace = min(cmp.Or(pcfg.VoteStopGrace, pluginCloseTimeout), pluginCloseTimeout)
	if b.plugin, err = plugin.New(b.client, pcfg, opts...); err != nil {
		return err
	}
	for _, s := range b.shards.Sessions() {
		// Nothing the bot runs reads discordgo's State, a third of the memory
		// at 100,000 guilds (READY's session id, which autopost reads, is kept).
		s.StateEnabled = false
	}
	// Attached and serving (ops) before the sessions open: /readyz answers
	// 503 until every shard has its READY.
	if err := b.plugin.Attach(b.shards.Sessions()...); err != nil {
		return err
	}
	if err := b.plugin.RegisterCommands(ctx, app.ID); err != nil {
		return err
	}
	b.log.Info("registered slash commands on Discord")
	return nil
}

// close closes the points and the deployment, after the plugin's Run returned.
func (b *bot) close() {
	if b.points != nil {
		_ = b.points.close()
	}
	if b.dep != nil {
		_ = b.dep.Close()
	}
}
