package voterewards

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Bounds on what the service (or a webhook) may send. Nothing outside them
// stalls the pipeline: times and weights are clamped, and the vote goes on.
const (
	// maxClockSkew is how far in the future, by the local clock, a vote's
	// created_at may lie: a later one is clamped to now + maxClockSkew. An
	// unclamped future vote would make the poller ask for votes from that
	// date, and miss every vote until then.
	maxClockSkew = time.Minute
	// maxWeight is the largest weight kept (the service sends 1, or 2 on
	// weekends); a larger one becomes maxWeight, a smaller than 1 becomes 1.
	maxWeight = 10
	// maxQueryEntries bounds a webhook query kept with a vote.
	maxQueryEntries = 32
)

// fixes records what sanitize changed, for one log line; a bit set, so that
// the hot path does not allocate.
type fixes uint8

const (
	fixFuture fixes = 1 << iota
	fixNoCreated
	fixExpiry
	fixWeight
	fixQuery
)

func (f fixes) String() string {
	var out []string
	for _, n := range []struct {
		bit  fixes
		name string
	}{{fixFuture, "created_at in the future"}, {fixNoCreated, "no created_at"}, {fixExpiry, "expires_at out of range"},
		{fixWeight, "weight out of range"}, {fixQuery, "query too large"}} {
		if f&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return strings.Join(out, ", ")
}

// sanitize returns v made safe to store and schedule at now: UTC times
// without monotonic readings, created_at no later than now+maxClockSkew (and,
// when missing, the receipt time now: v0 webhooks carry none), expires_at
// after created_at and at most 2*VoteLifetime after it (else created_at +
// VoteLifetime), a weight in [1, maxWeight], a bounded query, and its Key. It
// reports what it changed. A vote it cannot make safe (no id of either kind,
// an id the store cannot keep, no Origin) is an error wrapping
// ErrInvalidVote.
func sanitize(v Vote, now time.Time) (Vote, fixes, error) {
	if err := checkIDs(v); err != nil {
		return v, 0, err
	}
	var f fixes
	v.CreatedAt, v.ExpiresAt, f = fixTimes(v.CreatedAt, v.ExpiresAt, now.UTC().Round(0), v.Origin == OriginWebhookV0)
	if v.Weight < 1 || v.Weight > maxWeight {
		v.Weight = min(max(v.Weight, 1), maxWeight)
		f |= fixWeight
	}
	if v.Hook != nil && !queryFits(v.Hook.Query) {
		h := *v.Hook // the caller's Hook is not ours to change
		h.Query = nil
		v.Hook = &h
		f |= fixQuery
	}
	return v, f, nil
}

// checkIDs refuses a vote that cannot be stored or told apart.
func checkIDs(v Vote) error {
	if voterID(v.Vote) == "" {
		return fmt.Errorf("%w: no user id or platform id", ErrInvalidVote)
	}
	if len(v.UserID) > maxIDLen || len(v.PlatformID) > maxIDLen || (v.Hook != nil && len(v.Hook.ID) > maxIDLen) {
		return fmt.Errorf("%w: id longer than %d bytes", ErrInvalidVote, maxIDLen)
	}
	if v.Origin < OriginHistory || v.Origin > OriginWebhookV0 {
		return fmt.Errorf("%w: %v", ErrInvalidVote, v.Origin)
	}
	return nil
}

// fixTimes returns created and expires made sane at now (see sanitize). A v0
// webhook's missing times are expected, not fixes to log.
func fixTimes(created, expires, now time.Time, v0 bool) (time.Time, time.Time, fixes) {
	var f fixes
	c, e := created.UTC().Round(0), expires.UTC().Round(0)
	switch {
	case c.IsZero():
		c = now
		if !v0 {
			f |= fixNoCreated
		}
	case c.After(now.Add(maxClockSkew)):
		c = now.Add(maxClockSkew)
		f |= fixFuture
	}
	if !e.After(c) || e.Sub(c) > 2*VoteLifetime {
		if !e.IsZero() || !v0 {
			f |= fixExpiry
		}
		e = c.Add(VoteLifetime)
	}
	return c, e, f
}

// queryFits reports whether q can be stored whole.
func queryFits(q map[string]string) bool {
	if len(q) > maxQueryEntries {
		return false
	}
	for k, val := range q {
		if len(k) > maxIDLen || len(val) > maxIDLen {
			return false
		}
	}
	return true
}

// checkSnapshot makes the times a store returns safe at now, as sanitize
// makes an arriving vote's: a store shared by several processes (Redis,
// PostgreSQL) holds times that this process did not measure, written by a
// process whose clock was ahead, by an older version, or planted. A
// checkpoint time later than now+maxClockSkew is treated as missing (a
// LastSeen from the future would make the poll skip every vote until then;
// a missing one re-reads from Since, which the dedup set absorbs; a missing
// Since restarts the lookback), and each vote's times are fixed as sanitize
// fixes them (an expiry a year away would never fire). It returns how many
// values it changed; a snapshot a sane store returns is left as it is.
func checkSnapshot(snap *Snapshot, now time.Time) int {
	now = now.UTC().Round(0)
	limit := now.Add(maxClockSkew)
	n := 0
	if snap.Checkpoint.LastSeen.After(limit) {
		snap.Checkpoint.LastSeen = time.Time{}
		n++
	}
	if snap.Checkpoint.Since.After(limit) {
		snap.Checkpoint.Since = time.Time{}
		n++
	}
	for _, votes := range [][]Vote{snap.Seen, snap.Pending, snap.Expiries} {
		for i := range votes {
			v := &votes[i]
			var f fixes
			v.CreatedAt, v.ExpiresAt, f = fixTimes(v.CreatedAt, v.ExpiresAt, now, false)
			if f != 0 {
				n++
			}
		}
	}
	return n
}

// checkFed fixes the times of a vote that another process published on the
// store's feed, as checkSnapshot fixes a loaded one's: a message on a shared
// channel may come from a process whose clock is ahead, or be planted, and an
// expiry a year away would keep the voter Active, and its expiry job waiting,
// for a year.
func (p *Poller) checkFed(ctx context.Context, v Vote) Vote {
	var f fixes
	v.CreatedAt, v.ExpiresAt, f = fixTimes(v.CreatedAt, v.ExpiresAt, p.cfg.clock.Now().UTC().Round(0), false)
	if f != 0 {
		p.noteOddTimes(ctx, 1)
	}
	return v
}

// noteOddTimes logs, once per Poller, that n values a shared store (or its
// feed) gave were out of range and were clamped.
func (p *Poller) noteOddTimes(ctx context.Context, n int) {
	if n == 0 || p.oddTimes.Swap(true) {
		return
	}
	p.log.WarnContext(ctx, "the store holds times in the future or out of range; clamped (logged once)",
		slog.Int("values", n), slog.Duration("max_clock_skew", maxClockSkew))
}
