package voterewards

import (
	"context"
	"fmt"
	"time"

	"github.com/dblkit/go-topgg/topgg"
)

// Vote is a vote as the handlers see it: the service's record and its dedup key.
type Vote struct {
	topgg.Vote
	// Key identifies the vote across polls and restarts: the user id and the
	// creation time, as "user_id@created_at" (RFC 3339, UTC, nanoseconds). A
	// handler can use it as an idempotency key.
	Key string
}

// VoteKey returns the dedup key of v: its user id (or, if the service sent none,
// its platform id) and its creation time. It is what [Vote.Key] holds.
func VoteKey(v topgg.Vote) string {
	id := v.UserID
	if id == "" {
		id = v.PlatformID
	}
	return id + "@" + v.CreatedAt.UTC().Format(time.RFC3339Nano)
}

func newVote(v topgg.Vote) Vote {
	// Votes are wall-clock facts: drop location and monotonic readings so that
	// a vote read from the store and from the service compare equal.
	v.CreatedAt = v.CreatedAt.UTC().Round(0)
	v.ExpiresAt = v.ExpiresAt.UTC().Round(0)
	return Vote{Vote: v, Key: VoteKey(v)}
}

// lane returns the id whose votes are handled one at a time.
func (v Vote) lane() string {
	if v.UserID != "" {
		return v.UserID
	}
	return v.PlatformID
}

// Handler handles one vote. It is called from the poller's worker goroutines;
// calls for one user never overlap. A non-nil error (or a panic) makes the
// poller retry the call later. ctx is cancelled when [Poller.Close] runs out
// of time; a handler should return soon after.
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
// [Config.OnGiveUp] receives. The vote is then recorded as done and is not
// retried again, also not after a restart.
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
// start (and a reward's expiry is not scheduled until then);
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
