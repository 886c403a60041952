package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/plugin/deploy"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topggprom"
)

// Shutdown bounds, as SIGTERM must end the process within 10 s: running vote
// handlers get pluginCloseTimeout (then their context is cancelled); the shards
// close once the jobs stopped, or after jobsFirst; discordgo's Close takes 1 s.
const (
	shutdownBudget     = 8 * time.Second
	pluginCloseTimeout = 4 * time.Second
	jobsFirst          = pluginCloseTimeout + time.Second
)

// bot is the example bot: one discordgo session per shard, the plugin, and
// what the environment names (the state, the fleet, the points, the ops server).
type bot struct {
	cfg     config
	log     *slog.Logger
	client  *topgg.Client
	reg     *prometheus.Registry // the ops server's (METRICS_ADDR); nil without
	metrics *topggprom.Collector // nil without METRICS_ADDR
	ops     *health.Server       // nil without METRICS_ADDR
	shards  *shards.Group
	dep     *deploy.Deployment
	plugin  *plugin.Plugin
	points  *pointsStore // nil: no points (points.go)
}

// newBot makes the client, the shards and the metrics registry, checking every value
// of the environment before any request (a *topgg.ConfigError names its variable).
func newBot(cfg config, log *slog.Logger) (*bot, error) {
	b := &bot{cfg: cfg, log: log}
	opts := []topgg.Option{topgg.WithLogger(log)}
	var err error
	if cfg.MetricsAddr != "" { // the client's requests, Go's and the process's
		b.reg = prometheus.NewRegistry()
		b.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		if b.metrics, err = topggprom.New(b.reg); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
		opts = append(opts, topgg.WithObserver(b.metrics.ObserveRequest))
	}
	b.client, err = cfg.Client(opts...) // a refused token or URL names its variable
	if err == nil {
		err = deploy.Check(cfg.Env)
	}
	if err == nil {
		b.shards, err = cfg.Shards(shards.WithLogger(log))
	}
	return b, err
}

// run runs the bot until ctx is done, then shuts it down; a ctx done during
// the start is a clean stop.
func (b *bot) run(ctx context.Context) error {
	defer b.close()
	if err := b.start(ctx); err != nil {
		err = errors.Join(err, b.shards.Close())
		if ctx.Err() != nil {
			b.log.Info("stopped before going online")
			return nil
		}
		return err
	}
	// The jobs stop (saving the state) before the shards close; the probes
	// answer until the end: the ops server stops after both.
	opsCtx, stopOps := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- b.serveOps(opsCtx) }()
	err := b.shards.Serve(ctx, b.plugin.Run, shards.Shutdown{JobsFirst: jobsFirst, Budget: shutdownBudget})
	stopOps()
	return errors.Join(err, <-served)
}

// start opens the deployment and the points, makes the plugin, attaches the
// sessions, registers the slash commands on Discord (on READY the plugin
// publishes the same to Top.gg) and listens for the ops server.
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
	if b.metrics != nil {
		opts = append(opts, plugin.WithMetrics(b.metrics))
	}
	if opts, err = b.perks(ctx, app.ID, opts); err != nil { // points.go
		return err
	}
	// Whatever TOPGG_VOTE_STOP_GRACE says, SIGTERM must end the bot within 10 s.
	pcfg := b.cfg.Config
	pcfg.VoteStopGrace = min(cmp.Or(pcfg.VoteStopGrace, pluginCloseTimeout), pluginCloseTimeout)
	if b.plugin, err = plugin.New(b.client, pcfg, opts...); err != nil {
		return err
	}
	for _, s := range b.shards.Sessions() {
		s.StateEnabled = false // nothing here reads discordgo's State: a third of the memory at 100,000 guilds
	}
	// Attached and serving (ops) before the sessions open: /readyz answers 503 until every READY.
	if err := b.plugin.Attach(b.shards.Sessions()...); err != nil {
		return err
	}
	if err := b.plugin.RegisterCommands(ctx, app.ID); err != nil {
		return err
	}
	b.log.Info("registered slash commands on Discord")
	return b.listenOps(ctx)
}

// close closes the points and the deployment, after the plugin's Run returned.
func (b *bot) close() {
	if b.points != nil && b.points.close != nil {
		_ = b.points.close()
	}
	if b.dep != nil {
		_ = b.dep.Close()
	}
}

// listenOps listens on METRICS_ADDR for /metrics, /livez and /readyz, so that
// a taken address fails the start; nothing without METRICS_ADDR.
func (b *bot) listenOps(ctx context.Context) error {
	if b.reg == nil {
		return nil
	}
	srv, err := health.Listen(ctx, health.ServerConfig{Addr: b.cfg.MetricsAddr, Logger: b.log,
		Metrics:  promhttp.HandlerFor(b.reg, promhttp.HandlerOpts{Registry: b.reg, Timeout: health.Timeout}),
		Liveness: b.plugin.LivenessChecks(), Readiness: b.plugin.ReadinessChecks()})
	if err != nil {
		return fmt.Errorf("metrics server (METRICS_ADDR): %w", err)
	}
	b.log.Info("metrics server listening", "addr", srv.Addr().String(), "paths", "/metrics /livez /readyz")
	b.ops = srv
	return nil
}

// serveOps serves the ops server until ctx is done; nil at once without one.
func (b *bot) serveOps(ctx context.Context) error {
	if b.ops == nil {
		return nil
	}
	return b.ops.Run(ctx)
}
