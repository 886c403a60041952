package voterewards

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/dblkit/go-topgg/internal/backoff"
	"github.com/dblkit/go-topgg/topgg"
)

// pruneEvery is how often (by the poller's clock) the dedup set and the cache
// drop the votes that can no longer come back.
const pruneEvery = time.Minute

// firstFailureWait is the wait after a first failed poll; it doubles (with
// jitter) up to Interval.
const firstFailureWait = time.Second

// maxPagesPerPoll bounds the requests of one poll: a backstop against a
// service whose answers never end. 10,000 pages are a million votes; a longer
// history goes on after Interval from the saved cursor.
const maxPagesPerPoll = 10_000

// fetchLoop queues the work a previous run left, then polls: it reads pages
// until the end of the history, waits Interval, and starts again.
func (p *Poller) fetchLoop(ctx context.Context, startup []job) {
	for _, j := range startup {
		if !p.enqueue(ctx, j) {
			return
		}
	}
	for {
		if backoff.Sleep(ctx, p.poll(ctx)) != nil {
			return
		}
	}
}

// poll reads pages until the history is read to its end or a request fails,
// and returns how long to wait before the next poll.
//
// A poll starts from the saved cursor, or from the last vote seen minus the
// overlap, and then follows the cursors. After a page that has votes but no
// cursor it goes on from that page's newest created_at (kept in from) rather
// than from the checkpoint again, which would read the same first page over
// and over when more than a page of votes lies within the overlap. It never
// sends the same request twice: a repeat would bring the same page, so the
// poll ends there, whatever the service does with its cursors.
func (p *Poller) poll(ctx context.Context) time.Duration {
	var from time.Time
	asked := map[string]bool{}
	refusedOnce := false
	for range maxPagesPerPoll {
		q := p.query(from)
		k := queryKey(q)
		if asked[k] {
			return p.caughtUpNow(ctx)
		}
		asked[k] = true
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
				p.cp.Cursor = ""
				if refusedOnce {
					// A cursor from this very poll refused too: not a stale
					// checkpoint but a confused service; back off.
					return p.failed(err)
				}
				refusedOnce = true
				p.log.Warn("cursor refused; restarting from the last vote seen", slog.Any("error", err),
					slog.Time("from", p.query(from).StartDate))
				continue
			}
			return p.failed(err)
		}
		if err := p.ingest(ctx, page); err != nil {
			if ctx.Err() != nil {
				return 0
			}
			return p.failed(err)
		}
		p.failures = 0
		if len(page.Votes) == 0 {
			return p.caughtUpNow(ctx)
		}
		if page.Cursor == "" {
			from = newest(page.Votes)
		}
	}
	p.log.Warn("poll stopped at its page limit; going on after the interval", slog.Int("pages", maxPagesPerPoll))
	return p.cfg.Interval
}

// caughtUpNow marks the history as read to its end, prunes if due, and
// returns the wait before the next poll.
func (p *Poller) caughtUpNow(ctx context.Context) time.Duration {
	p.caughtUp.Store(true)
	p.maybePrune(ctx)
	return p.cfg.Interval
}

// queryKey identifies a request within one poll.
func queryKey(q topgg.VotesQuery) string {
	if q.Cursor != "" {
		return "cursor " + q.Cursor
	}
	return "start " + q.StartDate.UTC().Format(time.RFC3339Nano)
}

// newest returns the latest created_at of votes (not empty).
func newest(votes []topgg.Vote) time.Time {
	t := votes[0].CreatedAt
	for _, v := range votes[1:] {
		t = later(t, v.CreatedAt)
	}
	return t
}

// failed logs a failed poll and returns a doubling wait with jitter, capped
// at Interval.
func (p *Poller) failed(err error) time.Duration {
	p.failures++
	wait := backoff.Exp(p.failures, firstFailureWait, p.cfg.Interval)
	p.log.Error("poll failed", slog.Any("error", err), slog.Int("failures", p.failures), slog.Duration("retry_in", wait))
	return wait
}

// cursorRefused reports whether an answer to a cursor request says the cursor
// is no good (rather than the token, or the rate limit).
func cursorRefused(e *topgg.APIError) bool {
	return e.StatusCode >= 400 && e.StatusCode < 500 &&
		e.StatusCode != http.StatusTooManyRequests && !errors.Is(e, topgg.ErrUnauthorized)
}

// query returns the next request: by cursor; else from from, if set; else
// from the last vote seen minus the overlap (the first run: from Since). It
// never goes more than a year back.
func (p *Poller) query(from time.Time) topgg.VotesQuery {
	if p.cp.Cursor != "" {
		return topgg.VotesQuery{Cursor: p.cp.Cursor}
	}
	start := from
	if start.IsZero() {
		start = p.cp.Since
		if !p.cp.LastSeen.IsZero() {
			start = later(start, p.cp.LastSeen.Add(-p.cfg.Overlap))
		}
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
// change), then queues the new votes.
func (p *Poller) ingest(ctx context.Context, page *topgg.VotePage) error {
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
		// A page without a cursor: the poll goes on from its newest vote,
		// the next one from LastSeen.
		cp.Cursor = ""
	}
	var added []Vote
	if len(votes) > 0 || !sameCheckpoint(cp, p.cp) {
		var err error
		if added, err = p.store.Ingest(ctx, cp, votes); err != nil {
			return err
		}
	}
	p.cp = cp
	p.cache.add(added)
	for _, v := range added {
		if !p.enqueue(ctx, job{kind: KindReward, v: v, at: v.CreatedAt}) {
			return ctx.Err()
		}
	}
	return nil
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
	// A prune cut short by Close is not a failure: the next run prunes again.
	if err := p.store.Prune(ctx, p.cp.LastSeen.Add(-p.cfg.Overlap), now); err != nil && ctx.Err() == nil {
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
