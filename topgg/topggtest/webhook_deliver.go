package topggtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// maxAnswerBytes bounds the recorded body of a receiver's answer.
const maxAnswerBytes = 64 << 10

// webhookState runs the deliveries, one goroutine each, ended and waited for by
// close; it never takes s.mu.
type webhookState struct {
	mu         sync.Mutex
	ctx        context.Context // cancelled by close, under mu
	cancel     context.CancelFunc
	client     *http.Client
	wg         sync.WaitGroup
	deliveries []*Delivery
	targets    []webhookTarget // the options', then AddWebhook's
}

func newWebhookState(targets []webhookTarget) *webhookState {
	ctx, cancel := context.WithCancel(context.Background())
	return &webhookState{ctx: ctx, cancel: cancel, targets: targets, client: &http.Client{
		Transport: http.DefaultTransport.(*http.Transport).Clone(),
		// Top.gg does not follow redirects: a 3xx is the answer.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// sendAll delivers v1 to every v1 receiver and v0 (unless nil) to every v0
// one, each in a goroutine of its own (after close, nothing).
func (s *Server) sendAll(typ string, v1, v0 []byte) {
	h := s.hooks
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.targets {
		body := v0
		if t.version == 1 {
			body = v1
		}
		if body == nil || h.ctx.Err() != nil {
			continue
		}
		d := &Delivery{URL: t.url, Version: t.version, Type: typ, Body: body}
		h.deliveries = append(h.deliveries, d)
		h.wg.Add(1)
		go s.deliver(h.ctx, d, t, "topggtest-"+strconv.Itoa(len(h.deliveries)))
	}
}

// deliver makes one delivery's attempts: again after a timeout, a connection
// error or a 5xx, never after another answer.
func (s *Server) deliver(ctx context.Context, d *Delivery, t webhookTarget, trace string) {
	h := s.hooks
	defer h.wg.Done()
	delays := s.cfg.hookDelays
	if delays == nil {
		delays = defaultRetryDelays(t.version)
	}
	for try := 0; ; try++ {
		a := s.attempt(ctx, d, t, trace)
		h.mu.Lock()
		d.Attempts = append(d.Attempts, a)
		h.mu.Unlock()
		s.cfg.logger.Debug("topggtest webhook", "type", d.Type, "version", d.Version, "attempt", try+1,
			"status", a.Status, "error", a.Err)
		if (a.Err == nil && a.Status < 500) || try >= len(delays) || clock.Sleep(ctx, clock.Real(), delays[try]) != nil {
			break
		}
	}
	h.mu.Lock()
	d.Done = true
	h.mu.Unlock()
}

// attempt POSTs the delivery once, within the timeout.
func (s *Server) attempt(ctx context.Context, d *Delivery, t webhookTarget, trace string) Attempt {
	// Stamped when its timeout starts: At plus the timeout is never later
	// than the moment it gives up.
	a := Attempt{At: time.Now()}
	ctx, cancel := context.WithDeadline(ctx, a.At.Add(s.cfg.hookTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(d.Body))
	if err != nil { // the URL was checked by the option
		a.Err = err
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "topggtest-webhook")
	req.Header.Set(webhook.TraceHeader, trace)
	if t.version == 1 {
		// Real time even under WithNow: the receiver checks it against its own.
		req.Header.Set(webhook.SignatureHeader, webhook.Sign(t.key, time.Now(), d.Body))
	} else {
		req.Header.Set("Authorization", string(t.key))
	}
	a.Header = req.Header.Clone()
	resp, err := s.hooks.client.Do(req)
	if err != nil {
		a.Err = fmt.Errorf("topggtest: webhook to %s: %w", req.URL.Redacted(), err)
		return a
	}
	defer resp.Body.Close()
	a.Status = resp.StatusCode
	a.Body, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		// The body did not come in time: Top.gg counts it as a timeout.
		a.Status, a.Err = 0, fmt.Errorf("topggtest: webhook answer from %s: %w", req.URL.Redacted(), err)
	}
	return a
}

// close stops every delivery, waiting or in flight, and waits for them.
func (h *webhookState) close() {
	h.mu.Lock()
	h.cancel() // under mu: sendAll starts nothing after it
	h.mu.Unlock()
	h.wg.Wait()
	h.client.CloseIdleConnections()
}
