package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// errNotRunning: a webhook vote arrived while Run was not running; answered
// 500, so Top.gg retries it.
var errNotRunning = errors.New("plugin: not running")

// Bounds of the webhook server's stop: the grace of the requests in flight,
// then the wait for handlers that ignore their cancelled context.
const (
	webhookShutdownTimeout = 5 * time.Second
	webhookAbandonWait     = time.Second
)

// buildWebhook makes the receiver when the Config sets a secret.
func (p *Plugin) buildWebhook() error {
	if len(p.set.WebhookSecrets) == 0 && p.set.WebhookAuth == "" {
		return nil
	}
	h, err := webhook.New(webhook.Config{
		Secrets:    p.set.WebhookSecrets,
		LegacyAuth: p.set.WebhookAuth,
		OnVote:     p.ingestWebhook,
		Observer:   p.opts.webhookObserver,
		Logger:     p.opts.logger,
	})
	if err != nil {
		return err
	}
	p.hook = h
	// fmt's reflection over p.set would print these copies in clear.
	p.set.WebhookSecrets, p.set.WebhookAuth = nil, ""
	return nil
}

// WebhookHandler returns the receiver to mount on the bot's own server: 2xx once a vote
// is stored, 500 while Run is not running. Without a secret: [topgg.ErrNotConfigured].
func (p *Plugin) WebhookHandler() (http.Handler, error) {
	if p.hook == nil {
		return nil, fmt.Errorf("plugin: WebhookHandler: webhooks are off: %w (Config.WebhookSecrets, WebhookAuth)", topgg.ErrNotConfigured)
	}
	p.wire.mounted.Store(true)
	return p.hook, nil
}

// ingestWebhook stores a webhook's vote in the running vote pipeline.
func (p *Plugin) ingestWebhook(ctx context.Context, v webhook.Vote) error {
	p.checkWebhookVote(v)
	poller := p.poller.Load()
	if poller == nil {
		if v.Test {
			return nil // a v0 test delivery is no vote
		}
		return errNotRunning
	}
	return poller.IngestWebhook(ctx, v)
}

// WebhookAddr returns the address the plugin's own webhook server listens on
// while Run runs it (the port picked for port 0), else nil.
func (p *Plugin) WebhookAddr() net.Addr {
	if a := p.bound.Load(); a != nil {
		return *a
	}
	return nil
}

// listenWebhook opens the webhook server's listener: a bad address fails Run at once.
func (p *Plugin) listenWebhook(ctx context.Context) (net.Listener, error) {
	if p.hook == nil || p.set.WebhookAddr == "" {
		return nil, nil
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", p.set.WebhookAddr)
	if err != nil {
		return nil, fmt.Errorf("plugin: webhook receiver: %w", err)
	}
	p.log.Info("webhook receiver listening", "addr", l.Addr().String(), "path", p.set.WebhookPath)
	return l, nil
}

// webhookJob serves the receiver on first, then on a new listener of the same
// address after each restart.
func (p *Plugin) webhookJob(first net.Listener) func(context.Context) error {
	var used atomic.Bool
	return func(ctx context.Context) error {
		l := first
		if used.Swap(true) {
			var err error
			if l, err = p.listenWebhook(ctx); err != nil {
				return err
			}
		}
		return p.serveWebhook(ctx, l)
	}
}

// serveWebhook serves the receiver on l until ctx is done, then lets the
// requests in flight finish for a bounded time, closes their connections, and
// returns once their handlers returned, or webhookAbandonWait later.
func (p *Plugin) serveWebhook(ctx context.Context, l net.Listener) error {
	addr := l.Addr()
	p.bound.Store(&addr)
	defer p.bound.Store(nil)
	var inflight sync.WaitGroup
	mux := http.NewServeMux()
	if p.set.WebhookPath != "/" {
		mux.HandleFunc("/", p.notFound)
	}
	mux.Handle(p.set.WebhookPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		defer inflight.Done()
		p.hook.ServeHTTP(w, r)
	}))
	// Top.gg waits 5 s for an answer and sends small bodies.
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	err := httpx.Serve(ctx, srv, l, webhookShutdownTimeout)
	if ctx.Err() == nil { // Serve failed on its own
		return fmt.Errorf("webhook receiver: %w", err)
	}
	// Serve has returned and closed every connection: no handler starts,
	// so this Wait cannot race an Add.
	handlersDone := make(chan struct{})
	go func() { inflight.Wait(); close(handlersDone) }()
	left := p.opts.clock.NewTimer(webhookAbandonWait)
	defer left.Stop()
	select {
	case <-handlersDone:
	case <-left.C():
		p.log.Error("webhook handlers ignored their cancelled context; the receiver stops without them",
			"waited", webhookShutdownTimeout+webhookAbandonWait)
	}
	if err != nil {
		return fmt.Errorf("webhook receiver: %w", err)
	}
	return nil
}
