package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topggprom"
)

// ops is the operations server on METRICS_ADDR: /metrics (its own registry,
// with the Go and process collectors), /livez and /readyz. A nil *ops
// (METRICS_ADDR unset) serves nothing.
type ops struct {
	addr    string
	reg     *prometheus.Registry
	metrics *topggprom.Collector
}

// newClient makes the Top.gg client and, with METRICS_ADDR, the registry and
// the collectors (the client's requests, Go's and the process's); ops is nil
// without METRICS_ADDR.
func newClient(cfg config, log *slog.Logger) (_ *topgg.Client, o *ops, err error) {
	opts := []topgg.Option{topgg.WithLogger(log)}
	if cfg.MetricsAddr != "" {
		o = &ops{addr: cfg.MetricsAddr, reg: prometheus.NewRegistry()}
		if o.metrics, err = topggprom.New(o.reg); err == nil {
			err = errors.Join(o.reg.Register(collectors.NewGoCollector()),
				o.reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})))
		}
		if err != nil {
			return nil, nil, fmt.Errorf("metrics: %w", err)
		}
		opts = append(opts, topgg.WithObserver(o.metrics.ObserveRequest))
	}
	client, err := cfg.Client(opts...) // a refused token or URL names its variable
	return client, o, err
}

// start serves on METRICS_ADDR until stop, which shuts the server down
// (within health.ShutdownGrace) and returns once it is gone.
func (o *ops) start(ctx context.Context, p *plugin.Plugin, log *slog.Logger) (stop func() error, err error) {
	if o == nil {
		return func() error { return nil }, nil
	}
	srv, err := health.Listen(ctx, health.ServerConfig{Addr: o.addr, Logger: log,
		Metrics:  promhttp.HandlerFor(o.reg, promhttp.HandlerOpts{Registry: o.reg, Timeout: health.Timeout}),
		Liveness: p.LivenessChecks(), Readiness: p.ReadinessChecks()})
	if err != nil {
		return nil, fmt.Errorf("metrics server (METRICS_ADDR): %w", err)
	}
	log.Info("metrics server listening", "addr", srv.Addr().String(), "paths", "/metrics /livez /readyz")
	return srv.Start(), nil // answers until the bot is down
}
