package voterewards

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dblkit/go-topgg/topgg"
)

// Origin says which source delivered a vote first: the one the handler sees.
type Origin uint8

// Origins of a vote. The zero Origin is invalid: [Poller.Ingest] refuses it.
const (
	// OriginHistory is a vote read from the vote history by the poller.
	OriginHistory Origin = iota + 1
	// OriginWebhook is a v1 ("webhooks v2") signed vote.create delivery.
	OriginWebhook
	// OriginWebhookV0 is a legacy v0 webhook delivery, dated when received.
	OriginWebhookV0
)

// String returns "history", "webhook" or "webhook-v0".
func (o Origin) String() string {
	if o < OriginHistory || o > OriginWebhookV0 {
		return fmt.Sprintf("Origin(%d)", uint8(o))
	}
	return [...]string{"history", "webhook", "webhook-v0"}[o-1]
}

// Vote is a vote as the handlers see it: the service's record, where it came
// from, and its voter's ledger.
type Vote struct {
	topgg.Vote
	// Origin is the source that delivered the vote first.
	Origin Origin
	// Hook is what a webhook delivery carried beyond the record; nil from the history.
	Hook *Hook
	// Stats is the voter's ledger right after this vote was admitted.
	Stats Stats
}

// Hook is what a webhook delivery carried beyond the vote record.
type Hook struct {
	// ID is the webhook's vote id (v1 webhooks; "" for v0).
	ID string
	// Query is the delivery's query parameters, nil if none; read-only.
	Query map[string]string
}

// Key identifies the vote across sources, polls and restarts, as
// "voter@created_at" (RFC 3339, UTC, nanoseconds): an idempotency key.
func (v Vote) Key() string {
	return voterID(v.Vote) + "@" + v.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// voterID is the id a vote is deduplicated and queued on: PlatformID, else UserID.
func voterID(v topgg.Vote) string { return cmp.Or(v.PlatformID, v.UserID) }

// Handler handles one vote from a worker goroutine; calls for one user never
// overlap. An error or a panic is retried later. ctx is cancelled once Run's
// context is done and [Config.GracePeriod] passed.
type Handler func(ctx context.Context, v Vote) error

// DeliveryError is what [Config.OnGiveUp] receives: a handler that failed every
// attempt or, with Recording, a success the store could not record; the vote
// stays pending (a reward without expiry) until the next [Poller.Run] or
// [Poller.Redeliver]. It unwraps to the last attempt's error (the store's if
// Recording; a conc *panics.ErrRecovered for a panic).
type DeliveryError struct {
	// Expiry is set for [Config.OnExpire]'s call, clear for [Config.OnReward]'s.
	Expiry bool
	// Recording is set when the handler succeeded and recording it failed.
	Recording bool

	key      string
	attempts int
	err      error
}

func (e *DeliveryError) Error() string {
	k := "reward"
	if e.Expiry {
		k = "expiry"
	}
	if e.Recording {
		return fmt.Sprintf("voterewards: recording the %s of vote %s failed %d time(s): %v", k, e.key, e.attempts, e.err)
	}
	return fmt.Sprintf("voterewards: %s handler for vote %s failed %d time(s): %v", k, e.key, e.attempts, e.err)
}

// Unwrap returns the last attempt's error.
func (e *DeliveryError) Unwrap() error { return e.err }

// Sentinel errors, for errors.Is.
var (
	// ErrInvalidVote is returned by [Poller.Ingest] for a vote that cannot be
	// one; a webhook receiver answers such a delivery 400.
	ErrInvalidVote = errors.New("voterewards: invalid vote")
	// ErrNotRunning is returned by [Poller.Redeliver] when Run is not running.
	ErrNotRunning = errors.New("voterewards: Run is not running")

	errRunning     = fmt.Errorf("voterewards: Poller %w", topgg.ErrRunning)
	errNilHistory  = fmt.Errorf("voterewards: New: %w (History)", topgg.ErrNilArgument)
	errNilPage     = errors.New("voterewards: History returned no page and no error")
	errNilSnapshot = errors.New("voterewards: Store.Load returned no snapshot and no error")
	errAbandoned   = errors.New("voterewards: delivery abandoned at stop") // Run's context ended the retries; the job stays pending
	errHeld        = errors.New("voterewards: held while the store fails") // the store failed, so the job was not started; a reload takes it again
)
