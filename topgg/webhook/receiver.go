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
	"strconv"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// Receiver receives Top.gg webhook deliveries: an http.Handler for POST
// requests, v1 (signed) and, when configured, v0 (legacy) on the same path.
// Make it with [New]; it is safe for concurrent use, and nothing of a
// delivery runs after its ServeHTTP returned.
//
// Answers, chosen so that Top.gg retries exactly what may succeed later
// (it retries a timeout or a 5xx, never a 4xx):
//   - 204 once the event is accepted (and OnVote stored a vote); 200 with a
//     JSON body for an integration.create that OnIntegrationCreate answered;
//   - 401 for a missing or malformed signature header (v0: no Authorization);
//   - 403 for a signature no secret made, a timestamp outside the tolerance,
//     a wrong v0 Authorization, or a v1 delivery when no v1 secret is set;
//   - 400 for a body that is not a valid event, 413 for a body over
//     [MaxBodyBytes] (refused without being read whole), 405 for a method
//     other than POST;
//   - 500 when OnVote or OnIntegrationCreate failed or panicked.
//
// A panic in a callback (OnVote, OnIntegrationCreate, OnEvent, Observer) is
// contained: it is logged at Error with the callback's name and the stack,
// and the peer gets the answer an error would give (500 before the answer;
// after it, nothing more is written) without any detail of the panic.
//
// No callback runs for a refused delivery. A Receiver prints without its
// secrets; the zero Receiver answers every request 500.
type Receiver struct {
	keys          keyring                // v1 secrets; nil when v1 is off
	legacy        func(auth string) bool // checks a v0 Authorization; nil when v0 is off
	onVote        func(context.Context, Vote) error
	onEvent       func(context.Context, Event)
	onIntegration func(context.Context, IntegrationCreate) (IntegrationAnswer, error)
	observer      func(Outcome)
	tolerance     time.Duration
	log           *slog.Logger
	clock         clock.Clock
}

// New returns a Receiver for cfg. It fails with [ErrNoSecret], [ErrMalformedSecret]
// or [ErrNoCallback] (wrapped) for a Config that could accept nothing or
// deliver to nobody.
func New(cfg Config) (*Receiver, error) {
	cfg, err := cfg.check()
	if err != nil {
		return nil, err
	}
	h := &Receiver{
		onVote:        cfg.OnVote,
		onEvent:       cfg.OnEvent,
		onIntegration: cfg.OnIntegrationCreate,
		observer:      cfg.Observer,
		tolerance:     cfg.Tolerance,
		log:           cfg.Logger.With("component", "topgg/webhook"),
		clock:         cfg.clock,
	}
	if len(cfg.Secrets) > 0 {
		h.keys = newKeyring(cfg.Secrets)
	}
	if cfg.LegacyAuth != "" {
		h.legacy = legacyChecker(cfg.LegacyAuth)
	}
	return h, nil
}

// String describes the Receiver without its secrets.
func (h *Receiver) String() string {
	if h == nil || h.clock == nil {
		return "webhook.Receiver{unconfigured}"
	}
	return fmt.Sprintf("webhook.Receiver{v1 secrets: %d [redacted], v0: %s, tolerance: %s}", len(h.keys), setOrNot(h.legacy != nil), h.tolerance)
}

// Format prints the Receiver without its secrets under every verb (%#v included).
func (h *Receiver) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, h.String()) }

// errNotConfigured answers a zero or nil Receiver.
var errNotConfigured = errors.New("webhook: Receiver not made by webhook.New")

// ServeHTTP receives one delivery: it authenticates it, reads and decodes the
// body, lets OnVote (or OnIntegrationCreate) store it, answers, flushes the
// answer, and then calls OnEvent.
func (h *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h == nil || h.clock == nil {
		http.Error(w, errNotConfigured.Error(), http.StatusInternalServerError)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(w, r, http.StatusMethodNotAllowed, errors.New("webhook: method not allowed, use POST"))
		h.observe(r.Context(), OutcomeMethodNotAllowed)
		return
	}
	ev, err := h.receive(r)
	if err != nil {
		h.refuse(w, r, statusOf(err), err)
		h.observe(r.Context(), outcomeOf(err))
		return
	}
	ev.Trace = r.Header.Get(TraceHeader)
	outcome := h.answer(w, r, &ev)
	h.observe(r.Context(), outcome)
	if outcome != OutcomeAccepted {
		return
	}
	if h.onEvent != nil {
		// After the answer: a panic writes nothing more (Top.gg has its 2xx)
		// and is counted on its own.
		ctx := context.WithoutCancel(r.Context())
		if err := h.contain(ctx, "OnEvent", func() error { h.onEvent(ctx, ev); return nil }); err != nil {
			h.observe(ctx, OutcomePanic)
		}
	}
}

// receive authenticates the request and decodes its body: v1 when it has a
// signature header, else v0.
func (h *Receiver) receive(r *http.Request) (Event, error) {
	if vals := r.Header.Values(SignatureHeader); len(vals) > 0 {
		return h.receiveV1(r, vals)
	}
	return h.receiveV0(r)
}

func (h *Receiver) receiveV1(r *http.Request, vals []string) (Event, error) {
	if h.keys == nil {
		return Event{}, fmt.Errorf("%w: no v1 secret is configured", ErrSignatureMismatch)
	}
	if len(vals) != 1 {
		return Event{}, fmt.Errorf("%w: several signature headers", ErrMalformedSignature)
	}
	sig, err := parseSignature(vals[0])
	if err != nil {
		return Event{}, err
	}
	// The timestamp is checked before the body is read: a stale replay costs
	// nothing.
	if err := sig.fresh(h.clock.Now(), h.tolerance); err != nil {
		return Event{}, err
	}
	body, err := readBody(r)
	if err != nil {
		return Event{}, err
	}
	if !h.keys.match(&sig, body) {
		return Event{}, ErrSignatureMismatch
	}
	return Decode(body)
}

func (h *Receiver) receiveV0(r *http.Request) (Event, error) {
	if h.legacy == nil {
		return Event{}, fmt.Errorf("%w: missing %s header", ErrNoSignature, SignatureHeader)
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return Event{}, fmt.Errorf("%w: missing %s or Authorization header", ErrNoSignature, SignatureHeader)
	}
	if !h.legacy(auth) {
		return Event{}, fmt.Errorf("%w: wrong Authorization", ErrSignatureMismatch)
	}
	body, err := readBody(r)
	if err != nil {
		return Event{}, err
	}
	return decodeLegacy(body)
}

// legacyChecker compares with want in constant time. Only want's digest is
// kept, inside a closure: the comparison takes the same time whatever the
// lengths, and no formatting of a Receiver reaches even the digest.
func legacyChecker(want Secret) func(string) bool {
	wantSum := sha256.Sum256([]byte(want))
	return func(auth string) bool {
		sum := sha256.Sum256([]byte(auth))
		return subtle.ConstantTimeCompare(sum[:], wantSum[:]) == 1
	}
}

// statusOf maps a refusal to the status Top.gg must see: 4xx, never retried.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrNoSignature), errors.Is(err, ErrMalformedSignature):
		return http.StatusUnauthorized
	case errors.Is(err, ErrSignatureMismatch), errors.Is(err, ErrTimestamp):
		return http.StatusForbidden
	case errors.Is(err, ErrBodyTooLarge):
		return http.StatusRequestEntityTooLarge
	default: // ErrMalformedBody, or a body cut short by the client
		return http.StatusBadRequest
	}
}

func (h *Receiver) refuse(w http.ResponseWriter, r *http.Request, status int, err error) {
	level := slog.LevelDebug // scanners and wrong methods are noise
	if status == http.StatusForbidden || status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge {
		level = slog.LevelWarn // looks like Top.gg, but something is misconfigured
	}
	h.log.Log(r.Context(), level, "webhook delivery refused",
		slog.Int("status", status), slog.String("reason", err.Error()), slog.String("remote", r.RemoteAddr))
	if status == http.StatusRequestEntityTooLarge {
		// Do not let the server drain the rest of a huge body.
		w.Header().Set("Connection", "close")
	}
	http.Error(w, err.Error(), status)
}

// answer stores what must be stored before the answer, then writes and
// flushes it. It returns the outcome: OutcomeAccepted, or why not.
func (h *Receiver) answer(w http.ResponseWriter, r *http.Request, ev *Event) Outcome {
	switch {
	case ev.Vote != nil && h.onVote != nil:
		if o := h.storeVote(w, r, ev.Vote); o != OutcomeAccepted {
			return o
		}
	case ev.IntegrationCreate != nil && h.onIntegration != nil:
		return h.answerIntegration(w, r, ev.IntegrationCreate)
	}
	w.WriteHeader(http.StatusNoContent)
	h.flush(w, r)
	return OutcomeAccepted
}

// storeVote calls OnVote. On an error or a panic it writes the answer and
// returns why; on success it writes nothing and returns OutcomeAccepted.
func (h *Receiver) storeVote(w http.ResponseWriter, r *http.Request, v *Vote) Outcome {
	ctx := r.Context()
	err := h.contain(ctx, "OnVote", func() error { return h.onVote(ctx, *v) })
	switch {
	case err == nil:
		return OutcomeAccepted
	case errors.Is(err, errPanicked):
		http.Error(w, "vote not stored", http.StatusInternalServerError)
		return OutcomePanic
	case errors.Is(err, ErrMalformedBody):
		// The store says this can never be a vote: a retry would fail the same way.
		h.log.WarnContext(ctx, "webhook vote refused as malformed; answering 400",
			slog.Int("version", v.Version), slog.String("vote_id", v.ID), slog.Any("error", err))
		http.Error(w, "malformed vote", http.StatusBadRequest)
		return OutcomeMalformed
	}
	h.log.ErrorContext(ctx, "webhook vote not stored; answering 500 so that Top.gg retries",
		slog.Int("version", v.Version), slog.String("vote_id", v.ID), slog.Any("error", err))
	http.Error(w, "vote not stored", http.StatusInternalServerError)
	return OutcomeStoreFailed
}

func (h *Receiver) answerIntegration(w http.ResponseWriter, r *http.Request, ic *IntegrationCreate) Outcome {
	ctx := r.Context()
	var ans IntegrationAnswer
	err := h.contain(ctx, "OnIntegrationCreate", func() (err error) {
		ans, err = h.onIntegration(ctx, *ic)
		return err
	})
	if errors.Is(err, errPanicked) {
		http.Error(w, "integration not created", http.StatusInternalServerError)
		return OutcomePanic
	}
	if err == nil && ans.WebhookURL == "" {
		err = errors.New("OnIntegrationCreate answered no WebhookURL")
	}
	if err != nil {
		h.log.ErrorContext(r.Context(), "webhook integration.create not answered; answering 500",
			slog.String("connection_id", ic.ConnectionID), slog.Any("error", err))
		http.Error(w, "integration not created", http.StatusInternalServerError)
		return OutcomeStoreFailed
	}
	if ans.Routes == nil {
		ans.Routes = []string{}
	}
	body, err := json.Marshal(ans)
	if err != nil { // unreachable: two strings and a slice of strings
		http.Error(w, "integration answer not encoded", http.StatusInternalServerError)
		return OutcomeStoreFailed
	}
	// A Content-Length makes the answer complete at the flush; a chunked one
	// would end only when ServeHTTP returns, after OnEvent.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	h.flush(w, r)
	return OutcomeAccepted
}

func (h *Receiver) flush(w http.ResponseWriter, r *http.Request) {
	if err := http.NewResponseController(w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		h.log.DebugContext(r.Context(), "webhook answer not flushed", slog.Any("error", err))
	}
}
