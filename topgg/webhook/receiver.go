package webhook

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
)

// Receiver is an http.Handler for Top.gg's deliveries, v1 and, when configured,
// v0; make it with [New]. It answers 2xx once stored, 4xx for what no retry
// mends, 500 when a callback failed (Top.gg retries). Safe for concurrent use.
type Receiver struct {
	keys   keyring                // v1 secrets; empty when v1 is off
	legacy func(auth string) bool // checks a v0 Authorization; nil when v0 is off
	cfg    Config                 // checked, without its secrets
}

// New returns a Receiver for cfg; a bad cfg is a *topgg.ConfigError naming the
// field, never a secret.
func New(cfg Config) (*Receiver, error) {
	cfg, err := cfg.check()
	if err != nil {
		return nil, err
	}
	h := &Receiver{keys: newKeyring(cfg.Secrets)}
	if cfg.LegacyAuth != "" {
		h.legacy = legacyChecker(cfg.LegacyAuth)
	}
	// The secrets live only in closures, which no formatting prints.
	cfg.Secrets, cfg.LegacyAuth = nil, ""
	cfg.Logger = cfg.Logger.With("component", "topgg/webhook")
	h.cfg = cfg
	return h, nil
}

// ServeHTTP authenticates and decodes one delivery, lets OnVote (or
// OnIntegrationCreate) store it, flushes the answer, then calls OnEvent.
func (h *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(w, r, ErrMethodNotAllowed)
		return
	}
	ev, err := h.receive(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	ev.Trace = r.Header.Get(TraceHeader)
	err = h.answer(w, r, &ev)
	h.observe(r.Context(), err)
	if err != nil || h.cfg.OnEvent == nil {
		return
	}
	// After the answer: a panic writes nothing more, and is observed.
	ctx := context.WithoutCancel(r.Context())
	if err := h.contain(ctx, "OnEvent", func() error { h.cfg.OnEvent(ctx, ev); return nil }); err != nil {
		h.observe(ctx, err)
	}
}

// receive authenticates the request and decodes its body: v1 when it has a
// signature header, else v0.
func (h *Receiver) receive(r *http.Request) (Event, error) {
	vals := r.Header.Values(SignatureHeader)
	switch {
	case len(vals) > 0 && len(h.keys) == 0:
		return Event{}, fmt.Errorf("%w: no v1 secret is configured", ErrSignatureMismatch)
	case len(vals) > 1:
		return Event{}, fmt.Errorf("%w: several signature headers", ErrMalformedSignature)
	case len(vals) == 1:
		body, err := h.keys.verify(vals[0], h.cfg.clock.Now(), func() ([]byte, error) { return readBody(r) })
		if err != nil {
			return Event{}, err
		}
		return Decode(body)
	case h.legacy == nil:
		return Event{}, fmt.Errorf("%w: missing %s header", ErrNoSignature, SignatureHeader)
	case r.Header.Get("Authorization") == "":
		return Event{}, fmt.Errorf("%w: missing %s or Authorization header", ErrNoSignature, SignatureHeader)
	case !h.legacy(r.Header.Get("Authorization")):
		return Event{}, fmt.Errorf("%w: wrong Authorization", ErrSignatureMismatch)
	}
	body, err := readBody(r)
	if err != nil {
		return Event{}, err
	}
	return decodeLegacy(body)
}

// readBody reads r's body, refusing one over maxBodyBytes before reading past it.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > maxBodyBytes {
		return nil, fmt.Errorf("%w: Content-Length %d over %d", ErrBodyTooLarge, r.ContentLength, maxBodyBytes)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if len(b) > maxBodyBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrBodyTooLarge, maxBodyBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading it: %w", ErrMalformedBody, err)
	}
	return b, nil
}

// legacyChecker compares with want in constant time, whatever the lengths;
// only want's digest is kept, in a closure no formatting reaches.
func legacyChecker(want Secret) func(string) bool {
	wantSum := sha256.Sum256([]byte(want))
	return func(auth string) bool {
		sum := sha256.Sum256([]byte(auth))
		return subtle.ConstantTimeCompare(sum[:], wantSum[:]) == 1
	}
}

// refusal maps a refusal to the status Top.gg must see (4xx, never retried).
func refusal(err error) int {
	switch {
	case errors.Is(err, ErrNoSignature), errors.Is(err, ErrMalformedSignature):
		return http.StatusUnauthorized
	case errors.Is(err, ErrTimestamp), errors.Is(err, ErrSignatureMismatch):
		return http.StatusForbidden
	case errors.Is(err, ErrBodyTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrMethodNotAllowed):
		return http.StatusMethodNotAllowed
	}
	return http.StatusBadRequest
}

func (h *Receiver) refuse(w http.ResponseWriter, r *http.Request, err error) {
	status := refusal(err)
	level := slog.LevelDebug // scanners and wrong methods are noise
	if status == http.StatusForbidden || status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge {
		level = slog.LevelWarn // looks like Top.gg, but something is misconfigured
	}
	h.cfg.Logger.Log(r.Context(), level, "webhook delivery refused",
		slog.Int("status", status), slog.String("reason", err.Error()), slog.String("remote", r.RemoteAddr))
	if status == http.StatusRequestEntityTooLarge {
		// Do not let the server drain the rest of a huge body.
		w.Header().Set("Connection", "close")
	}
	http.Error(w, err.Error(), status)
	h.observe(r.Context(), err)
}

// answer stores what must be stored before the answer, then writes and
// flushes it. It returns nil when accepted, or why not.
func (h *Receiver) answer(w http.ResponseWriter, r *http.Request, ev *Event) error {
	ctx := r.Context()
	var body []byte // an integration.create's answer; nil: 204
	switch v, ic := ev.Vote, ev.IntegrationCreate; {
	case v != nil && h.cfg.OnVote != nil:
		if err := h.contain(ctx, "OnVote", func() error { return h.cfg.OnVote(ctx, *v) }); err != nil {
			return h.fail(ctx, w, "vote", err, slog.Int("version", v.Version), slog.String("vote_id", v.ID))
		}
	case ic != nil && h.cfg.OnIntegrationCreate != nil:
		if err := h.contain(ctx, "OnIntegrationCreate", func() (err error) { body, err = h.integration(ctx, *ic); return err }); err != nil {
			return h.fail(ctx, w, "integration", err, slog.String("connection_id", ic.ConnectionID))
		}
		// A Content-Length completes the answer at the flush, before OnEvent.
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	if body == nil {
		w.WriteHeader(http.StatusNoContent)
	} else {
		_, _ = w.Write(body)
	}
	h.flush(w, r)
	return nil
}

// integration calls OnIntegrationCreate and encodes its answer.
func (h *Receiver) integration(ctx context.Context, ic IntegrationCreate) ([]byte, error) {
	ans, err := h.cfg.OnIntegrationCreate(ctx, ic)
	if err == nil && ans.WebhookURL == "" {
		err = errors.New("OnIntegrationCreate answered no WebhookURL")
	}
	if err != nil {
		return nil, err
	}
	if ans.Routes == nil {
		ans.Routes = []string{}
	}
	return json.Marshal(ans) // two strings and a slice of strings: cannot fail
}

// fail answers a callback's error: 400 when OnVote says the vote can never be
// stored (a retry would fail the same way), else 500, which Top.gg retries.
func (h *Receiver) fail(ctx context.Context, w http.ResponseWriter, what string, err error, attrs ...slog.Attr) error {
	status, level := http.StatusInternalServerError, slog.LevelError
	if what == "vote" && errors.Is(err, ErrMalformedBody) {
		status, level = http.StatusBadRequest, slog.LevelWarn
	}
	if !errors.Is(err, ErrPanicked) { // a panic was logged with its stack
		h.cfg.Logger.LogAttrs(ctx, level, "webhook "+what+" not stored; answering "+strconv.Itoa(status),
			append(attrs, slog.Any("error", err))...)
	}
	http.Error(w, what+" not stored", status)
	return err
}

func (h *Receiver) flush(w http.ResponseWriter, r *http.Request) {
	if err := http.NewResponseController(w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		h.cfg.Logger.DebugContext(r.Context(), "webhook answer not flushed", slog.Any("error", err))
	}
}

// contain calls f and turns a panic in it into an error wrapping ErrPanicked,
// logged with the stack: net/http would drop the connection unretried.
func (h *Receiver) contain(ctx context.Context, callback string, f func() error) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			h.cfg.Logger.ErrorContext(ctx, "webhook callback panicked",
				slog.String("callback", callback), slog.Any("panic", rec), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("%w: %s", ErrPanicked, callback)
		}
	}()
	return f()
}

// observe tells the Observer, if any, of one answer, containing a panic.
func (h *Receiver) observe(ctx context.Context, err error) {
	if h.cfg.Observer != nil {
		_ = h.contain(ctx, "Observer", func() error { h.cfg.Observer(err); return nil })
	}
}
