package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/dblkit/go-topgg/internal/backoff"
)

// discordgo's Open takes no context, nor do some of its calls, and it sleeps
// through a 429 without looking at one. The pieces in this file make the bot's
// start honour its context, so that a SIGTERM while Discord is slow or silent
// ends the start at once.

// Bounds of a wait on a 429: at least a moment, so that a bad answer cannot spin.
const (
	minRateLimitWait = 100 * time.Millisecond
	maxRateLimitWait = time.Minute
)

// restCall runs a discordgo REST call (call passes opts on) under ctx: the request
// carries ctx, and a 429 is waited out here, honouring ctx, instead of in
// discordgo's uninterruptible sleep.
func restCall(ctx context.Context, log *slog.Logger, call func(opts ...discordgo.RequestOption) error) error {
	for {
		err := call(discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false))
		var rl *discordgo.RateLimitError
		if !errors.As(err, &rl) || rl.RateLimit == nil || rl.TooManyRequests == nil {
			return err
		}
		wait := min(max(rl.RetryAfter, minRateLimitWait), maxRateLimitWait)
		log.Warn("Discord is rate-limiting the bot; waiting", "retry_after", wait)
		if err := backoff.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// fetchApplication reads the bot's own application (its id names the commands)
// under ctx.
func fetchApplication(ctx context.Context, log *slog.Logger, s *discordgo.Session) (*discordgo.Application, error) {
	var app discordgo.Application
	err := restCall(ctx, log, func(opts ...discordgo.RequestOption) error {
		body, err := s.RequestWithBucketID(http.MethodGet, discordgo.EndpointOAuth2Application("@me"), nil,
			discordgo.EndpointOAuth2Application(""), opts...)
		if err != nil {
			return err
		}
		return json.Unmarshal(body, &app)
	})
	if err != nil {
		return nil, err
	}
	if app.ID == "" {
		return nil, errors.New("the application Discord sent has no id")
	}
	return &app, nil
}

// gatewayLookup ties the gateway lookup that discordgo's Open makes (GET gateway,
// without a context) to ctx, the bot's, and waits out a 429 on it under ctx
// rather than letting discordgo sleep through it. Other requests pass untouched.
// It is safe for concurrent use.
type gatewayLookup struct {
	ctx  context.Context
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper without changing req. The lookup's
// wait on a 429 is bounded by req's context too (the client's timeout).
func (t *gatewayLookup) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.String() != discordgo.EndpointGateway {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.ctx, cancel)
	release := func() { stop(); cancel() }
	for {
		resp, err := t.next.RoundTrip(req.Clone(ctx))
		if err != nil {
			release()
			return nil, err
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			// The body is read after RoundTrip returns: ctx lives until it is closed.
			resp.Body = &releaseOnClose{ReadCloser: resp.Body, release: release}
			return resp, nil
		}
		wait := retryAfter(resp.Header.Get("Retry-After"))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if err := backoff.Sleep(ctx, wait); err != nil {
			release()
			return nil, fmt.Errorf("waiting out Discord's rate limit on the gateway lookup: %w", err)
		}
	}
}

// retryAfter reads a Retry-After header in seconds (Discord's form), bounded.
func retryAfter(h string) time.Duration {
	secs, err := strconv.ParseFloat(h, 64)
	switch {
	case err != nil || math.IsNaN(secs):
		return time.Second
	case secs >= maxRateLimitWait.Seconds():
		return maxRateLimitWait
	}
	return max(time.Duration(secs*float64(time.Second)), minRateLimitWait)
}

// releaseOnClose runs release once, when the body is closed.
type releaseOnClose struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releaseOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// gatewayDialer dials one shard's gateway connections, none after ctx (the
// bot's) is done, and can abort the connection a pending Open waits on: Open
// holds the session's lock while it waits for the gateway's first messages, so
// Close cannot interrupt it, but closing the connection under it can. It is safe
// for concurrent use.
type gatewayDialer struct {
	ctx    context.Context
	dialer net.Dialer

	mu   sync.Mutex
	last net.Conn // the connection dialled last
}

func newGatewayDialer(ctx context.Context) *gatewayDialer { return &gatewayDialer{ctx: ctx} }

// websocketDialer returns the dialer for discordgo's Session.Dialer: gorilla's
// defaults, with d's connections.
func (d *gatewayDialer) websocketDialer() *websocket.Dialer {
	return &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: 45 * time.Second,
		NetDialContext:   d.dial,
	}
}

func (d *gatewayDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(d.ctx, cancel)
	defer stop()
	c, err := d.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// abort runs after ctx is done and takes mu: either it sees this
	// connection, or this sees ctx done.
	if err := d.ctx.Err(); err != nil {
		_ = c.Close()
		return nil, err
	}
	d.last = c
	return c, nil
}

// abort closes the connection dialled last. Call it only while an Open is
// pending and after ctx is done: once Open has returned, that connection is the
// shard's live one.
func (d *gatewayDialer) abort() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last != nil {
		_ = d.last.Close()
	}
}
