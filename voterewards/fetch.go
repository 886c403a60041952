package voterewards

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

const (
	pruneEvery       = time.Minute  // how often the dedup set and the cache drop expired votes
	firstFailureWait = time.Second  // the wait after a first failed poll, doubling up to Interval
	maxPagesPerPoll  = 10_000       // bounds the requests of one poll, against answers that never end
	replayWindow     = VoteLifetime // how far before the newest vote read the dedup set keeps every vote
)

// fetchLoop queues the work a previous run left, then polls every Interval.
func (r *run) fetchLoop(ctx context.Context, startup []job) {
	for _, j := range startup {
		if !r.admit(ctx, j, true, false) {
			return
		}
	}
	for {
		if r.sleep(ctx, r.poll(ctx)) != nil {
			return
		}
	}
}

// poll reads pages, at most maxPagesPerPoll and none twice, until the end, a
// page that adds nothing or a failed request, and returns the wait before the
// next poll; after a page without a cursor it goes on from its newest vote.
func (r *run) poll(ctx context.Context) time.Duration {
	var from time.Time
	asked := map[topgg.VotesQuery]bool{}
	refusedOnce := false
	for range maxPagesPerPoll {
		q := r.query(from)
		if asked[q] {
			return r.caughtUpNow(ctx)
		}
		asked[q] = true
		page, err := r.page(ctx, q)
		if err != nil {
			wait, retry := r.requestFailed(ctx, q, from, err, refusedOnce)
			if !retry {
				return wait
			}
			refusedOnce = true
			continue
		}
		added, err := r.ingest(ctx, page)
		if err != nil {
			if ctx.Err() != nil {
				return 0
			}
			return r.failed(err)
		}
		r.failures, r.refused = 0, false // a spell of failures ends
		if len(page.Votes) == 0 {
			return r.caughtUpNow(ctx)
		}
		next := from
		if page.Cursor == "" {
			next = slices.MaxFunc(page.Votes, func(a, b topgg.Vote) int { return a.CreatedAt.Compare(b.CreatedAt) }).CreatedAt
		}
		if added == 0 && (page.Cursor != "" || !next.After(from)) { // nothing new
			return r.caughtUpNow(ctx)
		}
		from = next
	}
	r.log.Warn("poll stopped at its page limit; going on after the interval", slog.Int("pages", maxPagesPerPoll))
	return r.p.cfg.Interval
}

// page reads one page of the history, unless a fleet leader is past its clock.
func (r *run) page(ctx context.Context, q topgg.VotesQuery) (*topgg.VotePage, error) {
	if err := clock.CheckTerm(ctx); err != nil {
		return nil, fmt.Errorf("voterewards: %w", err)
	}
	page, err := r.p.src.Votes(ctx, q)
	if err == nil && page == nil {
		err = errNilPage
	}
	return page, err
}

// requestFailed returns the wait after a failed request q, or true to retry at
// once from the last vote seen: a cursor refused for the first time this poll.
func (r *run) requestFailed(ctx context.Context, q topgg.VotesQuery, from time.Time, err error, refusedOnce bool) (time.Duration, bool) {
	if ctx.Err() != nil {
		return 0, false
	}
	// A 4xx other than a refused token or the rate limit says the cursor is no good.
	var e *topgg.APIError
	if q.Cursor == "" || !errors.As(err, &e) || e.StatusCode < 400 || e.StatusCode >= 500 ||
		e.StatusCode == http.StatusTooManyRequests || errors.Is(e, topgg.ErrUnauthorized) {
		var rl *topgg.RateLimitError
		if !errors.As(err, &rl) {
			return r.failed(err), false
		}
		r.log.Warn("rate limited; waiting", slog.Duration("retry_after", rl.RetryAfter))
		return cmp.Or(max(rl.RetryAfter, 0), r.p.cfg.Interval), false
	}
	r.cp.Cursor = ""
	if refusedOnce { // a cursor of this very poll refused too: back off
		return r.failed(err), false
	}
	r.log.Warn("cursor refused; restarting from the last vote seen", slog.Any("error", err),
		slog.Time("from", r.query(from).StartDate))
	return 0, true
}

// caughtUpNow marks the history read to its end, prunes if due, returns Interval.
func (r *run) caughtUpNow(ctx context.Context) time.Duration {
	r.p.caughtUp.Store(true)
	r.maybePrune(ctx)
	return r.p.cfg.Interval
}

// failed logs a failed poll and returns a doubling wait with jitter, capped
// at Interval. A refused token is the client's to report at error level.
func (r *run) failed(err error) time.Duration {
	r.failures++
	wait := clock.Backoff(r.failures, firstFailureWait, r.p.cfg.Interval)
	level, msg := slog.LevelError, "poll failed"
	if errors.Is(err, topgg.ErrUnauthorized) {
		level, msg = slog.LevelDebug, "poll failed: Top.gg refuses the token"
		if !r.refused {
			level, r.refused = slog.LevelWarn, true
		}
	}
	r.log.LogAttrs(context.Background(), level, msg, slog.Any("error", err), slog.Int("failures", r.failures), slog.Duration("retry_in", wait))
	return wait
}

// query returns the next request: by cursor, else from from (at first, Since or
// the last vote seen minus the overlap), within the last year and overlap.
func (r *run) query(from time.Time) topgg.VotesQuery {
	if r.cp.Cursor != "" {
		return topgg.VotesQuery{Cursor: r.cp.Cursor}
	}
	now := r.p.cfg.clock.Now()
	start := from
	if start.IsZero() { // a zero LastSeen is before any Since
		start = later(r.cp.Since, r.cp.LastSeen.Add(-overlap))
	}
	if latest := now.Add(-overlap); start.After(latest) {
		start = latest
	}
	if oldest := oldestStart(now); start.Before(oldest) {
		r.log.Warn("vote history older than one year is gone; skipping it", slog.Time("from", start), slog.Time("to", oldest))
		start = oldest
		r.cp.Since = later(r.cp.Since, oldest)
		r.p.since.Store(r.cp.Since.UnixNano())
	}
	return topgg.VotesQuery{StartDate: start.UTC()} // UTC: no monotonic reading, so equal queries are equal keys
}

// ingest stores a page with the new checkpoint in one change, queues the new
// votes and returns how many; a vote with no id, or a replay, is skipped.
func (r *run) ingest(ctx context.Context, page *topgg.VotePage) (int, error) {
	now := r.p.cfg.clock.Now()
	votes := make([]Vote, 0, len(page.Votes))
	cp := r.cp
	for _, tv := range page.Votes {
		v, err := r.p.sanitize(Vote{Vote: tv, Origin: OriginHistory}, now)
		if err != nil {
			r.log.Warn("skipping a vote the service sent", slog.Any("error", err))
			continue
		}
		if r.replayed(v, now) {
			r.log.Warn("skipping an expired vote from before the dedup set's window (a replay)", slog.String("key", v.Key()))
			continue
		}
		votes = append(votes, v)
		cp.LastSeen = later(cp.LastSeen, v.CreatedAt)
	}
	switch {
	case page.Cursor != "":
		cp.Cursor = page.Cursor
	case len(page.Votes) > 0: // the next poll goes on from LastSeen
		cp.Cursor = ""
	}
	var added []Vote
	if len(votes) > 0 || cp.Cursor != r.cp.Cursor || !cp.LastSeen.Equal(r.cp.LastSeen) || !cp.Since.Equal(r.cp.Since) {
		var err error
		if added, err = r.p.cfg.Store.Ingest(ctx, &cp, votes, r.p.cfg.StreakGrace); err != nil {
			if ctx.Err() == nil {
				r.storeFailed(err)
				r.in.ask(false, true) // it may have committed: a reload queues what it added
			}
			return 0, err
		}
		r.storeAnswered(true)
		r.p.observeIngest(votes, added)
	}
	r.cp = cp
	r.p.cache.add(added)
	for _, v := range added {
		if !r.admit(ctx, job{v: v, at: v.CreatedAt}, true, false) {
			return len(added), ctx.Err()
		}
	}
	return len(added), nil
}

// replayed reports whether v may be a vote pruned from the dedup set (expired,
// from before the window): whatever the history sends again, it is not new.
func (r *run) replayed(v Vote, now time.Time) bool {
	return !r.cp.LastSeen.IsZero() && v.CreatedAt.Before(r.cp.LastSeen.Add(-replayWindow)) && !v.ExpiresAt.After(now)
}

// maybePrune drops expired votes from the cache and, before the replay window, the dedup set, at most once per pruneEvery.
func (r *run) maybePrune(ctx context.Context) {
	now := r.p.cfg.clock.Now()
	if now.Sub(r.lastPrune) < pruneEvery {
		return
	}
	r.lastPrune = now
	r.p.cache.prune(now)
	if r.cp.LastSeen.IsZero() {
		return
	}
	cutoff := r.cp.LastSeen.Add(-replayWindow)
	if err := r.p.cfg.Store.Prune(ctx, cutoff, now); err != nil && ctx.Err() == nil {
		r.log.Error("pruning the dedup set failed", slog.Any("error", err))
	}
	r.lmu.Lock() // forget the jobs done before forgetDone ago
	maps.DeleteFunc(r.known, func(_ jobKey, c claimed) bool { return c.state == claimDone && c.at.Before(now.Add(-forgetDone)) })
	r.lmu.Unlock()
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
