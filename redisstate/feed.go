package redisstate

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/voterewards"
)

// Follow implements [voterewards.Feed] with pub/sub on the channel the ingest
// script publishes to. It calls resync once Redis confirms the subscription,
// and again after every reconnect (a Redis restart, a dropped connection, a
// reader Redis cut off for its output buffer): the votes published meanwhile
// are lost to pub/sub, and the caller reloads the store. A message that does
// not decode also asks for a resync. Redis errors never end it: it waits
// (50 ms doubling to 1 s) and reconnects, until ctx is done; then it returns
// nil. Nothing it started outlives it.
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
			// The next Receive reconnects and subscribes again; its
			// confirmation triggers the resync.
			failures++
			wait := min(50*time.Millisecond<<min(failures-1, 5), time.Second)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
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
