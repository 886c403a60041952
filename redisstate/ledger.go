package redisstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/fence"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// The ledger in Redis: per voter, one field of one hash (no per-vote
// history); each leaderboard is a sorted set in exactly
// [voterewards.CompareStandings] order: the score is minus the total, and the
// member is ReachedAt in a fixed-width decimal form, then the voter id, so
// that equal scores come by ReachedAt, then voter id. A month's board has a
// hash beside it with each voter's votes, total and ReachedAt in that month.
// The ingest script updates it as it admits the vote (see ledgerLua).

// zeroUnix is the zero time's unix seconds: a new voter's Month in the scripts.
var zeroUnix = time.Time{}.Unix()

// monthKeys returns the sorted set and the hash of month m's board.
func (s *State) monthKeys(m time.Time) (board, standings string) {
	name := m.UTC().Format("2006-01")
	return fence.Key(s.bot, "votes:board:"+name), fence.Key(s.bot, "votes:month:"+name)
}

// ledgerArgs are one vote's ledger arguments in the ingest script: its
// counted weight, month, streak end and month board's KEYS index (the hash is
// the next key). months collects the month keys of a call.
func ledgerArgs(v voterewards.Vote, grace time.Duration, months *monthIndex) []any {
	m := voterewards.MonthOf(v.CreatedAt)
	until := v.ExpiresAt.Add(grace)
	return []any{max(v.Weight, 1), m.Unix(), until.Unix(), until.Nanosecond(), months.index(m)}
}

// monthIndex numbers the month boards of one ingest call as KEYS indexes (two
// keys per month) after the fixed keys.
type monthIndex struct {
	s     *State
	keys  []string
	first int
	seen  map[time.Time]int
}

func (mi *monthIndex) index(m time.Time) int {
	if i, ok := mi.seen[m]; ok {
		return i
	}
	board, standings := mi.s.monthKeys(m)
	i := mi.first + len(mi.keys)
	mi.keys = append(mi.keys, board, standings)
	mi.seen[m] = i
	return i
}

// errBadLedger is a ledger record in Redis that does not decode.
var errBadLedger = errors.New("redisstate: damaged vote ledger record in Redis")

// ledgerFields is how many integers a voter's ledger record holds: votes,
// total, streak, best, until (2), month, month votes, month total, last (2).
const ledgerFields = 11

// parseInts reads n space-separated integers.
func parseInts(raw string, n int) ([]int64, error) {
	parts := strings.Fields(raw)
	if len(parts) != n {
		return nil, errBadLedger
	}
	out := make([]int64, n)
	for i, p := range parts {
		x, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, errBadLedger
		}
		out[i] = x
	}
	return out, nil
}

// decodeStats reads a voter's ledger record as the scripts write it.
func decodeStats(user, raw string) (voterewards.Stats, error) {
	f, err := parseInts(raw, ledgerFields)
	if err != nil {
		return voterewards.Stats{}, err
	}
	t := func(sec, nsec int64) time.Time { return time.Unix(sec, nsec).UTC() }
	return voterewards.Stats{
		UserID: user, Votes: int(f[0]), Total: int(f[1]), Streak: int(f[2]), BestStreak: int(f[3]),
		StreakUntil: t(f[4], f[5]), Month: t(f[6], 0), MonthVotes: int(f[7]), MonthTotal: int(f[8]),
		LastVote: t(f[9], f[10]),
	}, nil
}

// encodeStats writes st as decodeStats reads it, or "" for an empty Stats.
func encodeStats(st voterewards.Stats) string {
	if st.Votes == 0 {
		return ""
	}
	us, un := unixPair(st.StreakUntil)
	ls, ln := unixPair(st.LastVote)
	return fmt.Sprintf("%d %d %d %d %d %d %d %d %d %d %d", st.Votes, st.Total, st.Streak, st.BestStreak,
		us, un, st.Month.Unix(), st.MonthVotes, st.MonthTotal, ls, ln)
}

func unixPair(t time.Time) (int64, int) { return t.Unix(), t.Nanosecond() }

// Stats implements [voterewards.Store]: one HGET.
func (s *State) Stats(ctx context.Context, user string) (voterewards.Stats, error) {
	if user == "" {
		return voterewards.Stats{}, fmt.Errorf("redisstate: vote ledger Stats: %w (user)", topgg.ErrNilArgument)
	}
	raw, err := s.rdb.HGet(ctx, s.ledger, user).Result()
	if errors.Is(err, redis.Nil) {
		return voterewards.Stats{UserID: user}, nil
	}
	if err != nil {
		return voterewards.Stats{}, fmt.Errorf("redisstate: read the vote ledger: %w", err)
	}
	st, err := decodeStats(user, raw)
	if err != nil {
		return st, fmt.Errorf("%w: %s field %q", err, s.ledger, user)
	}
	return st, nil
}

// atWidth is the length of a board member's ReachedAt prefix: 13 digits of
// unix seconds plus 10^12 (years 1 to about 33,000) and 9 of nanoseconds.
const atWidth = 22

// Leaderboard implements [voterewards.Store]: one script reads the board's
// top n and their votes and totals.
func (s *State) Leaderboard(ctx context.Context, month time.Time, n int) ([]voterewards.Standing, error) {
	if n < 1 || n > voterewards.MaxLeaderboard {
		return nil, voterewards.ErrBadLeaderboard
	}
	board, standings := s.board, s.ledger
	if !month.IsZero() {
		board, standings = s.monthKeys(voterewards.MonthOf(month))
	}
	res, err := leaderboardScript.Run(ctx, s.rdb, []string{board, standings}, n).Slice()
	if err != nil {
		return nil, fmt.Errorf("redisstate: read the leaderboard: %w", err)
	}
	out := make([]voterewards.Standing, 0, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		st, err := decodeStanding(res[i], res[i+1])
		if err != nil {
			return nil, fmt.Errorf("%w: %s or %s", err, board, standings)
		}
		out = append(out, st)
	}
	return out, nil
}

// decodeStanding reads one board line: the member (ReachedAt and voter) and
// the voter's record, which starts with votes and total.
func decodeStanding(member, record any) (voterewards.Standing, error) {
	m, ok1 := member.(string)
	rec, ok2 := record.(string)
	if !ok1 || !ok2 || len(m) <= atWidth {
		return voterewards.Standing{}, errBadLedger
	}
	sec, err1 := strconv.ParseInt(m[:13], 10, 64)
	nsec, err2 := strconv.ParseInt(m[13:atWidth], 10, 64)
	fields := strings.Fields(rec)
	if err1 != nil || err2 != nil || len(fields) < 2 {
		return voterewards.Standing{}, errBadLedger
	}
	votes, err1 := strconv.Atoi(fields[0])
	total, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil {
		return voterewards.Standing{}, errBadLedger
	}
	return voterewards.Standing{UserID: m[atWidth:], Votes: votes, Total: total,
		ReachedAt: time.Unix(sec-1e12, nsec).UTC()}, nil
}
