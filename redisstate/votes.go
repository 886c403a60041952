package redisstate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// pruneLimit bounds the votes one Prune call removes: no script blocks Redis long.
const pruneLimit = 10_000

// Load implements [voterewards.Store]: one consistent MULTI/EXEC.
func (s *State) Load(ctx context.Context) (*voterewards.Snapshot, error) {
	var cp *redis.StringCmd
	var seen, pending, expiries *redis.MapStringStringCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		cp = p.Get(ctx, s.checkpoint)
		seen, pending, expiries = p.HGetAll(ctx, s.seen), p.HGetAll(ctx, s.pending), p.HGetAll(ctx, s.expiries)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("redisstate: load votes: %w", err)
	}
	snap := &voterewards.Snapshot{}
	if raw, err := cp.Result(); err == nil {
		if snap.Checkpoint, err = decodeCheckpoint(raw); err != nil {
			return nil, fmt.Errorf("%w: %s", err, s.checkpoint)
		}
	}
	for _, part := range []struct {
		key string
		m   map[string]string
		dst *[]voterewards.Vote
	}{{s.seen, seen.Val(), &snap.Seen}, {s.pending, pending.Val(), &snap.Pending}, {s.expiries, expiries.Val(), &snap.Expiries}} {
		*part.dst = make([]voterewards.Vote, 0, len(part.m))
		for field, raw := range part.m {
			v, err := decodeVote(raw)
			if err != nil {
				return nil, fmt.Errorf("%w: %s field %q", err, part.key, field)
			}
			*part.dst = append(*part.dst, v)
		}
	}
	slices.SortFunc(snap.Seen, byCreated)
	slices.SortFunc(snap.Pending, byCreated)
	slices.SortFunc(snap.Expiries, byExpiry)
	return snap, nil
}

// Ingest implements [voterewards.Store]; with cp it is fenced (the leader's poll).
func (s *State) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cp == nil && len(votes) == 0 {
		return nil, nil
	}
	args := make([]any, 0, 5+12*len(votes))
	cpRaw, save := "", "0"
	if cp != nil {
		cpRaw, save = encodeCheckpoint(*cp), "1"
	}
	args = append(args, s.channel, cpRaw, save, int64(voterewards.DedupWindow), zeroUnix)
	keys := []string{s.seen, s.voters, s.order, s.meta, s.pending, s.checkpoint, s.ledger, s.board}
	months := &monthIndex{s: s, first: len(keys) + 1, seen: map[time.Time]int{}}
	for _, v := range votes {
		v.Stats = voterewards.Stats{} // the script splices in the new ones
		args = append(args, v.Key(), voterID(v), v.CreatedAt.Unix(), v.CreatedAt.Nanosecond(),
			v.ExpiresAt.Unix(), v.ExpiresAt.Nanosecond(), encodeVote(v))
		args = append(args, ledgerArgs(v, grace, months)...)
	}
	keys = append(keys, months.keys...)
	var res any
	var err error
	if cp != nil {
		res, err = ingestFenced.Run(ctx, s.rdb, s.fence(), keys, args...)
	} else {
		res, err = ingestScript.Run(ctx, s.rdb, keys, args...).Result()
	}
	if err != nil {
		return nil, fmt.Errorf("redisstate: ingest %d votes: %w", len(votes), err)
	}
	return addedVotes(votes, res)
}

// addedVotes reads the ingest script's reply: per added vote, its index in
// votes and its voter's ledger record.
func addedVotes(votes []voterewards.Vote, res any) ([]voterewards.Vote, error) {
	reply, _ := res.([]any)
	var added []voterewards.Vote
	for j := 0; j+1 < len(reply); j += 2 {
		i, ok := reply[j].(int64)
		rec, ok2 := reply[j+1].(string)
		if !ok || !ok2 || i < 0 || int(i) >= len(votes) {
			return nil, fmt.Errorf("redisstate: ingest: unexpected reply %v", res)
		}
		v := votes[i]
		st, err := decodeStats(voterID(v), rec)
		if err != nil {
			return nil, err
		}
		v.Stats = st
		added = append(added, v)
	}
	return added, nil
}

// voterID is the id a vote is deduplicated and counted on.
func voterID(v voterewards.Vote) string { return cmp.Or(v.PlatformID, v.UserID) }

// Delivered implements [voterewards.Store]; fenced.
func (s *State) Delivered(ctx context.Context, v voterewards.Vote, expire bool) error {
	flag, enc := "0", ""
	if expire {
		flag, enc = "1", encodeVote(v)
	}
	if _, err := deliveredScript.Run(ctx, s.rdb, s.fence(), []string{s.pending, s.expiries}, v.Key(), flag, enc); err != nil {
		return fmt.Errorf("redisstate: record vote %s delivered: %w", v.Key(), err)
	}
	return nil
}

// Expired implements [voterewards.Store]; fenced.
func (s *State) Expired(ctx context.Context, v voterewards.Vote) error {
	if _, err := expiredScript.Run(ctx, s.rdb, s.fence(), []string{s.expiries}, v.Key()); err != nil {
		return fmt.Errorf("redisstate: record vote %s expired: %w", v.Key(), err)
	}
	return nil
}

// Prune implements [voterewards.Store]; fenced. It removes at most pruneLimit votes.
func (s *State) Prune(ctx context.Context, createdBefore, now time.Time) error {
	_, err := pruneScript.Run(ctx, s.rdb, s.fence(), []string{s.seen, s.voters, s.order, s.meta},
		createdBefore.Unix(), createdBefore.Nanosecond(), now.Unix(), now.Nanosecond(), pruneLimit,
		int64(voterewards.VoteLifetime/time.Second))
	if err != nil {
		return fmt.Errorf("redisstate: prune votes: %w", err)
	}
	return nil
}

func byCreated(a, b voterewards.Vote) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.Key(), b.Key()))
}

func byExpiry(a, b voterewards.Vote) int {
	return cmp.Or(a.ExpiresAt.Compare(b.ExpiresAt), byCreated(a, b))
}

// voteRecord is a vote as the store keeps it: JSON, never with a raw newline
// (the feed's separator).
type voteRecord struct {
	Key        string            `json:"k"`
	UserID     string            `json:"u,omitempty"`
	PlatformID string            `json:"p,omitempty"`
	Weight     int               `json:"w"`
	Created    int64             `json:"c"` // unix ns
	Expires    int64             `json:"e"` // unix ns
	Origin     uint8             `json:"o"`
	Hook       bool              `json:"h,omitempty"`
	HookID     string            `json:"hi,omitempty"`
	Query      map[string]string `json:"q,omitempty"`
	Stats      string            `json:"s,omitempty"` // encodeStats; last, as the ingest script splices it
}

func encodeVote(v voterewards.Vote) string {
	r := voteRecord{Key: v.Key(), UserID: v.UserID, PlatformID: v.PlatformID, Weight: v.Weight,
		Created: v.CreatedAt.UnixNano(), Expires: v.ExpiresAt.UnixNano(), Origin: uint8(v.Origin), Stats: encodeStats(v.Stats)}
	if v.Hook != nil {
		r.Hook, r.HookID, r.Query = true, v.Hook.ID, v.Hook.Query
	}
	b, _ := json.Marshal(r) // strings and numbers only: cannot fail
	return string(b)
}

// errBadVote is a vote record in Redis that does not decode.
var errBadVote = errors.New("redisstate: damaged vote record in Redis")

func decodeVote(raw string) (voterewards.Vote, error) {
	var r voteRecord
	if err := json.Unmarshal([]byte(raw), &r); err != nil || r.Key == "" {
		return voterewards.Vote{}, errBadVote
	}
	v := voterewards.Vote{
		Vote: topgg.Vote{UserID: r.UserID, PlatformID: r.PlatformID, Weight: r.Weight,
			CreatedAt: time.Unix(0, r.Created).UTC(), ExpiresAt: time.Unix(0, r.Expires).UTC()},
		Origin: voterewards.Origin(r.Origin),
	}
	if r.Hook {
		v.Hook = &voterewards.Hook{ID: r.HookID, Query: r.Query}
	}
	if r.Stats != "" {
		st, err := decodeStats(voterID(v), r.Stats)
		if err != nil {
			return voterewards.Vote{}, err
		}
		v.Stats = st
	}
	return v, nil
}

// encodeCheckpoint writes "cursor-length:cursor last since" with the times
// as unix ns (0 for the zero time).
func encodeCheckpoint(cp voterewards.Checkpoint) string {
	ns := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.UnixNano()
	}
	return strconv.FormatInt(ns(cp.LastSeen), 10) + " " + strconv.FormatInt(ns(cp.Since), 10) + " " + cp.Cursor
}

func decodeCheckpoint(raw string) (voterewards.Checkpoint, error) {
	parts := strings.SplitN(raw, " ", 3)
	if len(parts) != 3 {
		return voterewards.Checkpoint{}, errBadVote
	}
	t := func(s string) (time.Time, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n == 0 {
			return time.Time{}, err
		}
		return time.Unix(0, n).UTC(), nil
	}
	last, err1 := t(parts[0])
	since, err2 := t(parts[1])
	if err1 != nil || err2 != nil {
		return voterewards.Checkpoint{}, errBadVote
	}
	return voterewards.Checkpoint{Cursor: parts[2], LastSeen: last, Since: since}, nil
}

// Ping returns nil when Redis answers, for readiness.
func (s *State) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redisstate: %w", err)
	}
	return nil
}
