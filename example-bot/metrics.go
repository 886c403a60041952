package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topggprom"
)

// Timeouts of the operations server (METRICS_ADDR). A scrape or a probe is a
// small GET answered from memory; a client slower than this is not a
// Prometheus or a kubelet.
const (
	opsReadHeaderTimeout = 5 * time.Second
	opsReadTimeout       = 10 * time.Second
	opsWriteTimeout      = 10 * time.Second // a probe's checks take at most health.Timeout (5 s)
	opsIdleTimeout       = 2 * time.Minute
	opsShutdownTimeout   = time.Second // within the 10 s a SIGTERM leaves
)

// ops is the bot's operations server on METRICS_ADDR: /metrics (Prometheus,
// on a registry of its own with the Go and process collectors), /livez and
// /readyz (the plugin's health checks). A nil *ops (METRICS_ADDR unset) adds
// nothing and serves nothing.
type ops struct {
	addr    string
	reg     *prometheus.Registry
	metrics *topggprom.Collector
}

// newOps makes the registry and the collectors, or returns nil when
// METRICS_ADDR is unset. It listens on nothing yet.
func newOps(cfg config) (*ops, error) {
	if cfg.MetricsAddr == "" {
		return nil, nil
	}
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	m, err := topggprom.New(reg)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &ops{addr: cfg.MetricsAddr, reg: reg, metrics: m}, nil
}

// newClient makes the Top.gg client and, with METRICS_ADDR, the collectors
// that count its requests.
func newClient(cfg config, log *slog.Logger) (*topgg.Client, *ops, error) {
	o, err := newOps(cfg)
	if err != nil {
		return nil, nil, err
	}
	client, err := topgg.New(cfg.TopggToken.Reveal(),
		append([]topgg.Option{topgg.WithBaseURL(cfg.TopggAPIURL), topgg.WithLogger(log)}, o.clientOptions()...)...)
	if err != nil {
		return nil, nil, err
	}
	return client, o, nil
}

// attach attaches the plugin to the shards' sessions and starts the
// operations server (when o is not nil), before the sessions open: /readyz
// answers 503 until every shard has its READY.
func (b *bot) attach(ctx context.Context, o *ops) (stopOps func() error, err error) {
	if err := b.plugin.Attach(b.shards.Sessions()...); err != nil {
		return nil, err
	}
	return o.start(ctx, b.plugin, b.log)
}

// clientOptions counts the Top.gg client's requests.
func (o *ops) clientOptions() []topgg.Option {
	if o == nil {
		return nil
	}
	return []topgg.Option{topgg.WithObserver(o.metrics.ObserveRequest)}
}

// pluginOptions counts what the plugin's jobs do.
func (o *ops) pluginOptions() []plugin.Option {
	if o == nil {
		return nil
	}
	return []plugin.Option{plugin.WithMetrics(o.metrics)}
}

// start listens on METRICS_ADDR and serves until the returned stop is
// called; stop shuts the server down (bounded) and returns once it is gone.
// ready are readiness checks beyond the plugin's (a fleet's leadership).
// A nil *ops starts nothing.
func (o *ops) start(ctx context.Context, p *plugin.Plugin, log *slog.Logger, ready ...health.Check) (stop func() error, err error) {
	if o == nil {
		return func() error { return nil }, nil
	}
	livez, err := health.NewProbe("livez", p.LivenessChecks()...)
	if err != nil {
		return nil, err
	}
	readyz, err := health.NewProbe("readyz", append(p.ReadinessChecks(), ready...)...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.reg, promhttp.HandlerOpts{Registry: o.reg, Timeout: opsWriteTimeout / 2}))
	mux.Handle("/livez", livez)
	mux.Handle("/readyz", readyz)
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", o.addr)
	if err != nil {
		return nil, fmt.Errorf("metrics server (METRICS_ADDR): %w", err)
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: opsReadHeaderTimeout,
		ReadTimeout:       opsReadTimeout,
		WriteTimeout:      opsWriteTimeout,
		IdleTimeout:       opsIdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	log.Info("metrics server listening", "addr", l.Addr().String(), "paths", "/metrics /livez /readyz")
	return func() error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opsShutdownTimeout)
		defer cancel()
		err := srv.Shutdown(sctx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = srv.Close()
		}
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		if err != nil {
			return fmt.Errorf("metrics server: %w", err)
		}
		return nil
	}, nil
}
