package voterewards

import (
	"context"
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
	// OriginWebhookV0 is a legacy v0 webhook delivery (no timestamp, no id:
	// its CreatedAt is the time it was received).
	OriginWebhookV0
)

// String returns "history", "webhook" or "webhook-v0".
func (o Origin) String() string {
	switch o {
	case OriginHistory:
		return "history"
	case OriginWebhook:
		return "webhook"
	case OriginWebhookV0:
		return "webhook-v0"
	}
	return fmt.Sprintf("Origin(%d)", uint8(o))
}

// Vote is a vote as the handlers see it: the service's record, where it came
// from and its dedup key.
type Vote struct {
	topgg.Vote
	// Origin is the source that delivered the vote first.
	Origin Origin
	// Hook is what a webhook delivery carried beyond the vote record; nil
	// for a vote read from the history. (A pointer keeps Vote small: votes
	// are map values and channel elements on the hot path.)
	Hook *Hook
}

// Hook is what a webhook delivery carried beyond the vote record.
type Hook struct {
	// ID is the webhook's vote id (v1 webhooks; "" for v0).
	ID string
	// Query is the delivery's query parameters (v1: its query object; v0:
	// its query string, parsed), nil if none. Handlers must not modify it.
	Query map[string]string
}

// Key identifies the vote across sources, polls and restarts: the voter's id
// (PlatformID, else UserID) and the creation time, as "id@created_at" (RFC
// 3339, UTC, nanoseconds). It is the store's dedup key, and a handler can use
// it as an idempotency key.
func (v Vote) Key() string {
	return voterID(v.Vote) + "@" + v.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// voterID is the id a vote is deduplicated and serialised on: the platform
// id, present in every source (history, v1 and v0 webhooks), else the
// service's user id.
func voterID(v topgg.Vote) string {
	if v.PlatformID != "" {
		return v.PlatformID
	}
	return v.UserID
}

func newVote(v topgg.Vote) Vote {
	// Votes are wall-clock facts: drop location and monotonic readings so that
	// a vote read from the store and from the service compare equal.
	v.CreatedAt = v.CreatedAt.UTC().Round(0)
	v.ExpiresAt = v.ExpiresAt.UTC().Round(0)
	return Vote{Vote: v, Origin: OriginHistory}
}

// lane returns the id whose votes are handled one at a time.
func (v Vote) lane() string { return voterID(v.Vote) }

// Handler handles one vote. It is called from the poller's worker goroutines;
// calls for one user never overlap. A non-nil error (or a panic) makes the
// poller retry the call later. ctx is cancelled when Run's context is done
// and the grace period ([Config.GracePeriod]) has passed; a handler should
// return soon after.
type Handler func(ctx context.Context, v Vote) error

// Kind says which handler a delivery is for.
type Kind uint8

// Kinds of delivery.
const (
	// KindReward is a call of [Config.OnReward] for a new vote.
	KindReward Kind = iota + 1
	// KindExpiry is a call of [Config.OnExpire] for a vote that expired.
	KindExpiry
)

// String returns "reward" or "expiry".
func (k Kind) String() string {
	switch k {
	case KindReward:
		return "reward"
	case KindExpiry:
		return "expiry"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// DeliveryError reports a handler that failed on every attempt; it is what
// [Config.OnGiveUp] receives. The vote is NOT recorded as done: it stays
// pending in the store and is delivered again by the next [Poller.Run] or
// [Poller.Redeliver]; a reward that was not delivered gets no expiry.
type DeliveryError struct {
	Kind     Kind
	Key      string
	Attempts int
	// Err is the last attempt's error; a *PanicError if it panicked.
	Err error
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("voterewards: %s handler for vote %s failed %d time(s): %v", e.Kind, e.Key, e.Attempts, e.Err)
}

// Unwrap returns the last attempt's error.
func (e *DeliveryError) Unwrap() error { return e.Err }

// RecordError reports a store write that failed on every attempt: the outcome
// of a handler call (Kind) for the vote Key could not be recorded. The vote
// stays pending in the store, so its handler is called again at the next
// Run or Redeliver (and a reward's expiry is not scheduled until then);
// [Config.OnGiveUp] receives it.
type RecordError struct {
	Kind     Kind
	Key      string
	Attempts int
	// Err is the last write's error.
	Err error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("voterewards: recording the %s of vote %s failed %d time(s): %v", e.Kind, e.Key, e.Attempts, e.Err)
}

// Unwrap returns the last write's error.
func (e *RecordError) Unwrap() error { return e.Err }

// PanicError is a handler panic, contained by the poller and treated as a failure.
type PanicError struct {
	// Value is what the handler panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("voterewards: handler panicked: %v", e.Value) }

// Unwrap returns Value if it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}
