package redisstate

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/voterewards"
)

// Follow implements [voterewards.Feed] with pub/sub: resync is called once
// subscribed, after every reconnect and for a message it cannot decode. Redis
// errors never end it; it returns nil once ctx is done.
func (s *State) Follow(ctx context.Context, added func(voterewards.Vote), resync func()) error {
	if added == nil || resync == nil {
		return errNilFunc
	}
	ps := s.rdb.Subscribe(ctx, s.channel)
	// Receive does not watch ctx: closing the PubSub ends a blocked read.
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { _ = ps.Close(); close(closed) })
	defer func() {
		if stop() {
			_ = ps.Close()
		} else {
			<-closed
		}
	}()
	failures := 0
	for {
		msg, err := ps.Receive(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			// The next Receive reconnects; its confirmation triggers the resync.
			failures++
			if clock.Sleep(ctx, clock.Real(), clock.Backoff(failures, 50*time.Millisecond, time.Second)) != nil {
				return nil
			}
			continue
		}
		failures = 0
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				resync()
			}
		case *redis.Message:
			deliverFeed(m.Payload, added, resync)
		}
	}
}

// deliverFeed decodes one feed message (the votes of one Ingest, one JSON
// record per line) and passes them on; a damaged message asks for a resync.
func deliverFeed(payload string, added func(voterewards.Vote), resync func()) {
	for line := range strings.SplitSeq(payload, "\n") {
		v, err := decodeVote(line)
		if err != nil {
			resync()
			return
		}
		added(v)
	}
}
