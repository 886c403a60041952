package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// minWait keeps a lease about to expire from being polled in a tight loop.
const minWait = 10 * time.Millisecond

// leaseSlack is how much a holder's remaining lease may exceed TTL before the
// campaign distrusts the key and waits TTL.
const leaseSlack = time.Second

// campaign tries to take the lease until it wins (ok) or ctx is done. sent is
// the local time just before the winning request: the lease cannot expire
// before sent+TTL.
func (l *Lease) campaign(ctx context.Context) (token int64, sent time.Time, ok bool) {
	// Subscribe before the first attempt, so that a release between a failed
	// attempt and the wait is not missed. go-redis resubscribes by itself
	// after a reconnect; the TTL wait covers a message lost meanwhile.
	ps := l.rdb.Subscribe(ctx, l.channel)
	defer ps.Close()
	released := ps.Channel()
	backoff := time.Duration(0)
	warned := false // an odd key is logged once per campaign, not per attempt
	for ctx.Err() == nil {
		sent = l.clock.Now()
		token, wait, err := l.tryAcquire(ctx)
		l.setKnown(err == nil) // won (setState follows), or another holds it
		switch {
		case err == nil && token > 0:
			return token, sent, true
		case err != nil:
			backoff = min(max(2*backoff, 100*time.Millisecond), l.renewEvery)
			wait = backoff
			if level := slog.LevelWarn; ctx.Err() == nil {
				if errors.Is(err, errDamaged) {
					level = slog.LevelError // no retry mends it: an operator must
				}
				l.log.Log(ctx, level, "lease campaign: Redis error; retrying", "err", err, "retry_in", wait)
			}
		case wait < 0: // the key has no TTL: someone set it by hand; do not poll it hard
			backoff = 0
			l.log.Warn("lease key has no expiry; was it written by something else?", "key", l.leaseKey)
			wait = l.ttl
		case wait > l.ttl+leaseSlack:
			// An expiry no holder with our TTL sets: not trusted, logged once.
			backoff = 0
			if !warned {
				warned = true
				l.log.Warn("lease key expires later than any holder sets; was it written by something else?",
					"key", l.leaseKey, "expires_in", wait, "ttl", l.ttl)
			}
			wait = l.ttl
		default:
			backoff = 0
			wait = min(max(wait, minWait), l.ttl)
		}
		if !l.waitRelease(ctx, released, wait) {
			break
		}
	}
	return 0, time.Time{}, false
}

// tryAcquire runs the acquire script once: the token when won, else how long
// the holder's lease still lives. A win the replicas did not all acknowledge
// is given back, its token never used (see runAcked).
func (l *Lease) tryAcquire(ctx context.Context) (token int64, wait time.Duration, err error) {
	actx, cancel := context.WithTimeout(ctx, l.renewEvery)
	defer cancel()
	reply, err := l.runAcked(actx, acquireScript, []string{l.leaseKey, l.fenceKey},
		[]any{l.holder, l.ttl.Milliseconds()}, func(v any) bool { t, _, ok := acquireReply(v); return ok && t > 0 })
	token, wait, ok := acquireReply(reply)
	switch {
	case redis.HasErrorPrefix(err, "DAMAGED"):
		return 0, 0, fmt.Errorf("fleet: %w: %s holds no fencing token (not overwritten: fix or delete it)", errDamaged, l.fenceKey)
	case err != nil && ok && token > 0:
		l.release(ctx, l.holder+":"+strconv.FormatInt(token, 10))
		return 0, 0, fmt.Errorf("fleet: election with token %d given back: %w", token, err)
	case err != nil:
		return 0, 0, err
	case !ok:
		return 0, 0, redis.Nil
	}
	return token, wait, nil
}

// acquireReply reads the acquire script's {token, remaining TTL ms}.
func acquireReply(v any) (token int64, wait time.Duration, ok bool) {
	vals, _ := v.([]any)
	if len(vals) != 2 {
		return 0, 0, false
	}
	t, ok1 := vals[0].(int64)
	w, ok2 := vals[1].(int64)
	return t, time.Duration(w) * time.Millisecond, ok1 && ok2
}

// waitRelease waits d, or until a release is announced; false when ctx is done.
func (l *Lease) waitRelease(ctx context.Context, released <-chan *redis.Message, d time.Duration) bool {
	t := l.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-released:
		return true
	case <-t.C():
		return true
	}
}
