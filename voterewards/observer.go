package voterewards

import (
	"log/slog"
	"time"
)

// EventType says what an [Event] reports.
type EventType uint8

// Types of [Event].
const (
	// EventIngested: a source delivered records of votes (a page of the
	// history, or one [Poller.Ingest] call's votes of one Origin). Added
	// counts the new votes stored, Duplicates the records of votes the
	// store already held.
	EventIngested EventType = iota + 1
	// EventDelivered: a handler succeeded and its outcome was recorded. For
	// a reward, Latency is the time from the vote's CreatedAt to then, on
	// the poller's clock.
	EventDelivered
	// EventRetried: a handler failed and is called again (Attempt is the
	// attempt about to be made: 2 for the first retry).
	EventRetried
	// EventGivenUp: a handler failed every attempt, or its outcome could not
	// be recorded: the vote stays pending in the store for the next Run or
	// [Poller.Redeliver].
	EventGivenUp
	// EventPending: the number of rewards this Run holds and has not
	// delivered (queued, in progress, or given up and kept pending) changed
	// to Pending. A Run starts from the store's pending votes and reports 0
	// when it returns: in a fleet, only the leader's Run holds any.
	EventPending
)

// String returns the type's name, such as "ingested"; it does not allocate.
func (t EventType) String() string {
	switch t {
	case EventIngested:
		return "ingested"
	case EventDelivered:
		return "delivered"
	case EventRetried:
		return "retried"
	case EventGivenUp:
		return "given_up"
	case EventPending:
		return "pending"
	}
	return "unknown"
}

// Event is one thing the pipeline did, as [Config.Observer] sees it. It is a
// plain value and carries no user id: observing it allocates nothing, and a
// metrics package can use its fields as bounded labels.
type Event struct {
	Type EventType
	// Kind is the handler of EventDelivered, EventRetried and EventGivenUp.
	Kind Kind
	// Origin is the source of the vote (of the records, for EventIngested).
	Origin Origin
	// Added and Duplicates are EventIngested's counts.
	Added, Duplicates int
	// Latency is EventDelivered's, for a reward.
	Latency time.Duration
	// Attempt is EventRetried's.
	Attempt int
	// Pending is EventPending's.
	Pending int
}

// observe tells the observer of e, if there is one, containing a panic.
func (p *Poller) observe(e Event) {
	if p.cfg.Observer == nil {
		return
	}
	defer func() {
		if rec := recover(); rec != nil {
			p.log.Error("Observer panicked", slog.String("event", e.Type.String()), slog.Any("panic", rec))
		}
	}()
	p.cfg.Observer(e)
}

// observeIngest reports the outcome of storing votes: per Origin, how many
// were new (in added) and how many the store held already. It does not
// allocate.
func (p *Poller) observeIngest(votes, added []Vote) {
	if p.cfg.Observer == nil {
		return
	}
	for o := OriginHistory; o <= OriginWebhookV0; o++ {
		in, out := countOrigin(votes, o), countOrigin(added, o)
		if in > 0 || out > 0 {
			p.observe(Event{Type: EventIngested, Origin: o, Added: out, Duplicates: max(in-out, 0)})
		}
	}
}

func countOrigin(votes []Vote, o Origin) int {
	n := 0
	for i := range votes {
		if votes[i].Origin == o {
			n++
		}
	}
	return n
}
