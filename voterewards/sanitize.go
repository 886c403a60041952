package voterewards

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds on what the service or a webhook may send: beyond them, times and weights are clamped.
const (
	maxClockSkew    = time.Minute // how far in the future a created_at may lie (a later one would hold the poll)
	maxWeight       = 10          // the largest weight kept (the service sends 1 or 2)
	maxQueryEntries = 32          // bounds a webhook query kept with a vote
	maxIDLen        = 1 << 10     // bounds that query's strings and the vote's ids
	// oldestVoteUnix (2000-01-01 UTC) is the earliest created_at taken: an older
	// one is a broken record that would make every later vote of its voter late.
	oldestVoteUnix = 946684800
)

// sanitize returns v made safe to store and schedule at now, logging what it
// changed; a vote it cannot make safe is an error wrapping ErrInvalidVote.
func (p *Poller) sanitize(v Vote, now time.Time) (Vote, error) {
	if err := checkIDs(v); err != nil {
		return v, err
	}
	var f []string
	v.CreatedAt, v.ExpiresAt, f = fixTimes(v.CreatedAt, v.ExpiresAt, now.UTC().Round(0), v.Origin == OriginWebhookV0)
	if v.Weight < 1 || v.Weight > maxWeight {
		v.Weight = min(max(v.Weight, 1), maxWeight)
		f = append(f, "weight out of range")
	}
	if v.Hook != nil && !queryFits(v.Hook.Query) {
		v.Hook = &Hook{ID: v.Hook.ID} // a new one: the caller's is not ours to change
		f = append(f, "query too large")
	}
	if f != nil {
		p.log.Warn("vote corrected", slog.String("key", v.Key()), slog.String("origin", v.Origin.String()), slog.String("fixes", strings.Join(f, ", ")))
	}
	return v, nil
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
	// Ids holding a control character or invalid UTF-8 are refused here so
	// that every store takes the same votes (PostgreSQL's text refuses them).
	for _, id := range []string{v.UserID, v.PlatformID} {
		if !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) {
			return fmt.Errorf("%w: an id holds a control character or invalid UTF-8", ErrInvalidVote)
		}
	}
	if !v.CreatedAt.IsZero() && v.CreatedAt.Unix() < oldestVoteUnix {
		return fmt.Errorf("%w: created_at before 2000", ErrInvalidVote)
	}
	return nil
}

// fixTimes returns created and expires in UTC without monotonic readings,
// created no later than now+maxClockSkew (now if missing), and expires after
// created and at most 2*VoteLifetime after it (else created+VoteLifetime).
// A vote from the future is moved back whole: its expiry moves with created.
func fixTimes(created, expires, now time.Time, v0 bool) (time.Time, time.Time, []string) {
	var f []string
	c, e := created.UTC().Round(0), expires.UTC().Round(0)
	switch limit := now.Add(maxClockSkew); {
	case c.IsZero():
		c = now
		if !v0 {
			f = append(f, "no created_at")
		}
	case c.After(limit):
		if !e.IsZero() {
			e = e.Add(limit.Sub(c))
		}
		c = limit
		f = append(f, "created_at in the future")
	}
	if !e.After(c) || e.Sub(c) > 2*VoteLifetime {
		if !e.IsZero() || !v0 {
			f = append(f, "expires_at out of range")
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

// checkSnapshot fixes a snapshot's times as sanitize does (a checkpoint time in
// the future is missing, but a LastSeen less than VoteLifetime ahead is this
// clock's lag) and returns how many values it changed. Pending votes keep
// their CreatedAt (see fixStored).
func checkSnapshot(snap *Snapshot, now time.Time) int {
	now = now.UTC().Round(0)
	limit := now.Add(maxClockSkew)
	n := 0
	// A LastSeen forgotten would let the poll read the history again from
	// Since, past the votes the dedup set no longer holds: new again.
	if cp := &snap.Checkpoint; cp.LastSeen.After(limit) && cp.LastSeen.Before(limit.Add(VoteLifetime)) {
		cp.LastSeen = limit
		n++
	}
	for _, t := range []*time.Time{&snap.Checkpoint.LastSeen, &snap.Checkpoint.Since} {
		if t.After(limit) {
			*t = time.Time{}
			n++
		}
	}
	for i := range snap.Seen {
		v := &snap.Seen[i]
		var f []string
		v.CreatedAt, v.ExpiresAt, f = fixTimes(v.CreatedAt, v.ExpiresAt, now, false)
		if f != nil {
			n++
		}
	}
	for _, votes := range [][]Vote{snap.Pending, snap.Expiries} {
		for i := range votes {
			if fixStored(&votes[i], now) {
				n++
			}
		}
	}
	return n
}

// fixStored fixes the expiry of a vote to be handed back to the store, as
// sanitize does, but keeps its CreatedAt (its Key, by which the store finds
// it): one ahead of this clock was dated by another process or the service.
func fixStored(v *Vote, now time.Time) bool {
	var f []string
	v.CreatedAt, v.ExpiresAt, f = fixTimes(v.CreatedAt, v.ExpiresAt, later(now, v.CreatedAt.UTC().Round(0)), false)
	return f != nil
}

// checkFed fixes the times of a vote from the store's feed, as checkSnapshot
// does: a vote to deliver keeps its CreatedAt, one for the cache only does not.
func (p *Poller) checkFed(ctx context.Context, v Vote, deliver bool) Vote {
	now := p.cfg.clock.Now().UTC().Round(0)
	fixed := fixStored(&v, now)
	if !deliver {
		var f []string
		v.CreatedAt, v.ExpiresAt, f = fixTimes(v.CreatedAt, v.ExpiresAt, now, false)
		fixed = fixed || f != nil
	}
	if fixed {
		p.noteOddTimes(ctx, 1)
	}
	return v
}

// noteOddTimes logs, once per Poller, that n values from the store were clamped.
func (p *Poller) noteOddTimes(ctx context.Context, n int) {
	if n == 0 || p.oddTimes.Swap(true) {
		return
	}
	p.log.WarnContext(ctx, "the store holds times in the future or out of range; clamped (logged once)",
		slog.Int("values", n), slog.Duration("max_clock_skew", maxClockSkew))
}
