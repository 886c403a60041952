package voterewards

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/dblkit/go-topgg/topgg"
)

// pruneEvery is how often (by the poller's clock) the dedup set and the cache
// drop the votes that can no longer come back.
const pruneEvery = time.Minute

// firstFailureWait is the wait after a first failed poll; it doubles up to Interval.
const firstFailureWait = time.Second

// fetchLoop queues the work a previous run left, then polls: it reads pages
// until the end of the history, waits Interval, and starts again.
func (p *Poller) fetchLoop(ctx context.Context, startup []job) {
	for _, j := range startup {
		if !p.enqueue(ctx, j) {
			return
		}
	}
	for {
		if !sleep(ctx, p.poll(ctx)) {
			return
		}
	}
}

// poll reads pages until the history is read to its end or a request fails,
// and returns how long to wait before the next poll.
func (p *Poller) poll(ctx context.Context) time.Duration {
	for ctx.Err() == nil {
		q := p.query()
		page, err := p.src.Votes(ctx, q)
		if err != nil {
			if ctx.Err() != nil {
				return 0
			}
			var rl *topgg.RateLimitError
			var api *topgg.APIError
			switch {
			case errors.As(err, &rl):
				p.log.Warn("rate limited; waiting", slog.Duration("retry_after", rl.RetryAfter))
				if rl.RetryAfter > 0 {
					return rl.RetryAfter
				}
				return p.cfg.Interval
			case q.Cursor != "" && errors.As(err, &api) && cursorRefused(api):
				p.log.Warn("cursor refused; restarting from the last vote seen", slog.Any("error", err),
					slog.Time("from", p.cp.LastSeen.Add(-p.cfg.Overlap)))
				p.cp.Cursor = ""
				continue
			}
			return p.failed(err)
		}
		done, err := p.ingest(ctx, q, page)
		if err != nil {
			if ctx.Err() != nil {
				return 0
			}
			return p.failed(err)
		}
		p.failures = 0
		if done {
			p.caughtUp.Store(true)
			p.maybePrune(ctx)
			return p.cfg.Interval
		}
	}
	return 0
}

// failed logs a failed poll and returns a doubling wait, capped at Interval.
func (p *Poller) failed(err error) time.Duration {
	p.failures++
	wait := firstFailureWait
	for i := 1; i < p.failures && wait < p.cfg.Interval; i++ {
		wait *= 2
	}
	wait = min(wait, p.cfg.Interval)
	p.log.Error("poll failed", slog.Any("error", err), slog.Int("failures", p.failures), slog.Duration("retry_in", wait))
	return wait
}

// cursorRefused reports whether an answer to a cursor request says the cursor
// is no good (rather than the token, or the rate limit).
func cursorRefused(e *topgg.APIError) bool {
	return e.StatusCode >= 400 && e.StatusCode < 500 &&
		e.StatusCode != http.StatusTooManyRequests && !errors.Is(e, topgg.ErrUnauthorized)
}

// query returns the next request: by cursor, or from the last vote seen minus
// the overlap (the first run: from Since), never more than a year back.
func (p *Poller) query() topgg.VotesQuery {
	if p.cp.Cursor != "" {
		return topgg.VotesQuery{Cursor: p.cp.Cursor}
	}
	start := p.cp.Since
	if !p.cp.LastSeen.IsZero() {
		start = later(start, p.cp.LastSeen.Add(-p.cfg.Overlap))
	}
	if oldest := oldestStart(p.cfg.Now()); start.Before(oldest) {
		// The service no longer has the history between start and oldest.
		p.log.Warn("vote history older than one year is gone; skipping it", slog.Time("from", start), slog.Time("to", oldest))
		start = oldest
		p.cp.Since = later(p.cp.Since, oldest)
		p.since.Store(p.cp.Since.UnixNano())
	}
	return topgg.VotesQuery{StartDate: start}
}

// ingest stores a page (new votes as pending, with the new checkpoint, in one
// change), then queues the new votes. It reports whether the history is read
// to its end.
func (p *Poller) ingest(ctx context.Context, q topgg.VotesQuery, page *topgg.VotePage) (bool, error) {
	votes := make([]Vote, len(page.Votes))
	cp := p.cp
	for i, tv := range page.Votes {
		votes[i] = newVote(tv)
		if votes[i].CreatedAt.After(cp.LastSeen) {
			cp.LastSeen = votes[i].CreatedAt
		}
	}
	switch {
	case page.Cursor != "":
		cp.Cursor = page.Cursor
	case len(votes) > 0:
		// A page without a cursor: continue from LastSeen next time.
		cp.Cursor = ""
	}
	var added []Vote
	if len(votes) > 0 || !sameCheckpoint(cp, p.cp) {
		var err error
		if added, err = p.store.Ingest(ctx, cp, votes); err != nil {
			return false, err
		}
	}
	p.cp = cp
	p.cache.add(added)
	for _, v := range added {
		if !p.enqueue(ctx, job{kind: KindReward, v: v, at: v.CreatedAt}) {
			return false, ctx.Err()
		}
	}
	// The end: an empty page; or a page that brought nothing new and would be
	// asked for again as it is (no cursor, or the same one), which a service
	// that repeats the last vote, or gives no cursor, would otherwise make an
	// endless loop of requests.
	return len(votes) == 0 || (len(added) == 0 && cp.Cursor == q.Cursor), nil
}

// maybePrune drops, at most once per pruneEvery, the votes that expired and
// lie before the overlap window, from the dedup set and the cache: both then
// hold the vote window, not the history.
func (p *Poller) maybePrune(ctx context.Context) {
	now := p.cfg.Now()
	if now.Sub(p.lastPrune) < pruneEvery {
		return
	}
	p.lastPrune = now
	p.cache.prune(now)
	if p.cp.LastSeen.IsZero() {
		return
	}
	if err := p.store.Prune(ctx, p.cp.LastSeen.Add(-p.cfg.Overlap), now); err != nil {
		p.log.Error("pruning the dedup set failed", slog.Any("error", err))
	}
}

func sameCheckpoint(a, b Checkpoint) bool {
	return a.Cursor == b.Cursor && a.LastSeen.Equal(b.LastSeen) && a.Since.Equal(b.Since)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
