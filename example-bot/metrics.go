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
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topggprom"
)

// opsTimeout bounds reading a request and writing an answer of the operations
// server: a scrape or a probe is a small GET answered from memory, and a
// probe's checks take at most health.Timeout (5 s).
const opsTimeout = 10 * time.Second

// ops is the operations server on METRICS_ADDR: /metrics (its own registry,
// with the Go and process collectors), /livez and /readyz. A nil *ops
// (METRICS_ADDR unset) serves nothing.
type ops struct {
	addr    string
	reg     *prometheus.Registry
	metrics *topggprom.Collector
}

// newOps makes the registry and the collectors (nil without METRICS_ADDR).
func newOps(cfg config) (*ops, error) {
	if cfg.MetricsAddr == "" {
		return nil, nil
	}
	reg := prometheus.NewRegistry()
	m, err := topggprom.New(reg)
	if err == nil {
		err = errors.Join(reg.Register(collectors.NewGoCollector()),
			reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})))
	}
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &ops{addr: cfg.MetricsAddr, reg: reg, metrics: m}, nil
}

// newClient makes the Top.gg client and the collectors that count its requests.
func newClient(cfg config, log *slog.Logger) (*topgg.Client, *ops, error) {
	o, err := newOps(cfg)
	if err != nil {
		return nil, nil, err
	}
	opts := []topgg.Option{topgg.WithBaseURL(cfg.TopggAPIURL), topgg.WithLogger(log)}
	if o != nil {
		opts = append(opts, topgg.WithObserver(o.metrics.ObserveRequest))
	}
	client, err := topgg.New(cfg.TopggToken.Reveal(), opts...)
	return client, o, err
}

// start serves on METRICS_ADDR until stop, which shuts the server down
// (within a second) and returns once it is gone.
func (o *ops) start(ctx context.Context, p *plugin.Plugin, log *slog.Logger) (stop func() error, err error) {
	if o == nil {
		return func() error { return nil }, nil
	}
	livez, err := health.NewProbe("livez", p.LivenessChecks()...)
	if err != nil {
		return nil, err
	}
	readyz, err := health.NewProbe("readyz", p.ReadinessChecks()...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.reg, promhttp.HandlerOpts{Registry: o.reg, Timeout: opsTimeout / 2}))
	mux.Handle("/livez", livez)
	mux.Handle("/readyz", readyz)
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", o.addr)
	if err != nil {
		return nil, fmt.Errorf("metrics server (METRICS_ADDR): %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: opsTimeout / 2, ReadTimeout: opsTimeout, WriteTimeout: opsTimeout,
		IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	serveCtx, stopServe := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- httpx.Serve(serveCtx, srv, l, time.Second) }() // within the 10 s a SIGTERM leaves
	log.Info("metrics server listening", "addr", l.Addr().String(), "paths", "/metrics /livez /readyz")
	return func() error {
		stopServe()
		if err := <-served; err != nil {
			return fmt.Errorf("metrics server: %w", err)
		}
		return nil
	}, nil
}
