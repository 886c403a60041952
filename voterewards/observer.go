package voterewards

import (
	"log/slog"
	"time"

	"github.com/sourcegraph/conc/panics"
)

// EventType says what an [Event] reports.
type EventType string

// Types of [Event].
const (
	// EventIngested: a source delivered records of votes (a history page, or
	// one Ingest call's votes of one Origin): Added new, Duplicates not.
	EventIngested EventType = "ingested"
	// EventDelivered: a handler succeeded and was recorded; for a reward,
	// Latency is the time since the vote's CreatedAt.
	EventDelivered EventType = "delivered"
	// EventRetried: a handler failed and is called again.
	EventRetried EventType = "retried"
	// EventGivenUp: a handler failed every attempt, or was not recorded.
	EventGivenUp EventType = "given_up"
	// EventPending: the rewards this Run holds undelivered (given up
	// included) changed to Pending; 0 when Run returns.
	EventPending EventType = "pending"
)

// Event is one thing the pipeline did, as [Config.Observer] sees it: a plain
// value without user ids, whose fields make bounded metric labels.
type Event struct {
	Type   EventType
	Expiry bool   // of EventDelivered, EventRetried and EventGivenUp: OnExpire's call, not OnReward's
	Origin Origin // the vote's source

	Added, Duplicates int           // EventIngested's
	Latency           time.Duration // EventDelivered's, for a reward
	Pending           int           // EventPending's
}

// observe tells the observer of e, if there is one, containing a panic.
func (p *Poller) observe(e Event) {
	if p.cfg.Observer != nil {
		p.contain("Observer", func() { p.cfg.Observer(e) }, slog.String("event", string(e.Type)))
	}
}

// contain calls the hook f, logging a panic of it with attrs (and the stack once per Poller).
func (p *Poller) contain(hook string, f func(), attrs ...any) {
	if rec := panics.Try(f); rec != nil {
		attrs = append(attrs, slog.Any("panic", rec.Value))
		if p.panicked.CompareAndSwap(false, true) {
			attrs = append(attrs, slog.String("stack", string(rec.Stack)))
		}
		p.log.Error(hook+" panicked", attrs...)
	}
}

// observeIngest reports per Origin how many votes were new, how many known already.
func (p *Poller) observeIngest(votes, added []Vote) {
	var in, out [OriginWebhookV0 + 1]int // sanitized: no other Origin
	for i := range votes {
		in[votes[i].Origin]++
	}
	for i := range added {
		out[added[i].Origin]++
	}
	for o := OriginHistory; o <= OriginWebhookV0; o++ {
		if in[o] > 0 || out[o] > 0 {
			p.observe(Event{Type: EventIngested, Origin: o, Added: out[o], Duplicates: max(in[o]-out[o], 0)})
		}
	}
}
