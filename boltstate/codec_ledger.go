package boltstate

import (
	"encoding/binary"
	"time"

	"github.com/dblkit/go-topgg/voterewards"
)

// The state file's ledger, in the same binary form as its votes:
//
//	stats:    votes total streak best_streak (uvarints) streak_until(8)
//	          month(8) month_votes month_total (uvarints) last_vote(8)
//	ledger:   (in voters, ledgerKey) user -> version(1) stats
//	months:   month(8) user -> votes total (uvarints) reached_at(8), for
//	          each month of a voter's but the newest (which is in ledger)
//	board:    span(8) ^total(8) reached_at(8) user -> votes (uvarint)
//
// A vote record of codec version 3 ends with its Stats: flag(1), then user
// stats if 1. The board's span is a month's first instant, or allTime; within
// it keys sort in CompareStandings order, so the top n are the first n keys.
const (
	ledgerVersion = 1
	// maxCount bounds the counts a record may hold.
	maxCount = 1 << 40
	// boardKeyLen is a board key's length before the user id.
	boardKeyLen = 24
)

// span is the board span of month's UTC month, or of all time if month is
// zero: eight zero bytes, below every month's.
func span(month time.Time) (k [8]byte) {
	if !month.IsZero() {
		appendTime(k[:0], voterewards.MonthOf(month)) // into k: it has the room
	}
	return k
}

// appendCounts appends each of ns as a uvarint (a negative one as 0).
func appendCounts(b []byte, ns ...int) []byte {
	for _, n := range ns {
		b = binary.AppendUvarint(b, uint64(max(n, 0)))
	}
	return b
}

func appendStats(b []byte, s voterewards.Stats) []byte {
	b = appendCounts(b, s.Votes, s.Total, s.Streak, s.BestStreak)
	b = appendCounts(appendTime(appendTime(b, s.StreakUntil), s.Month), s.MonthVotes, s.MonthTotal)
	return appendTime(b, s.LastVote)
}

// encodeLedger encodes a voter's ledger record (the user is its key).
func encodeLedger(s voterewards.Stats) []byte {
	return appendStats(append(make([]byte, 0, 64), ledgerVersion), s)
}

func decodeLedger(user string, b []byte) (voterewards.Stats, error) {
	return decode(b, func(d *decoder) voterewards.Stats {
		if d.byte() != ledgerVersion {
			d.bad = true
		}
		return d.stats(user)
	})
}

func (d *decoder) count() int { return int(d.uvarint(maxCount)) }

// stats reads the fields of appendStats.
func (d *decoder) stats(user string) voterewards.Stats {
	s := voterewards.Stats{UserID: user}
	s.Votes, s.Total, s.Streak, s.BestStreak = d.count(), d.count(), d.count(), d.count()
	s.StreakUntil, s.Month = d.time(), d.time()
	s.MonthVotes, s.MonthTotal = d.count(), d.count()
	s.LastVote = d.time()
	return s
}

// appendVoteStats appends a vote record's Stats (version 3).
func appendVoteStats(b []byte, s voterewards.Stats) []byte {
	if s == (voterewards.Stats{}) {
		return append(b, 0)
	}
	return appendStats(appendString(append(b, 1), s.UserID), s)
}

func encodeStanding(s voterewards.Standing) []byte {
	return appendTime(appendCounts(make([]byte, 0, 24), s.Votes, s.Total), s.ReachedAt)
}

func decodeStanding(user string, b []byte) (voterewards.Standing, error) {
	return decode(b, func(d *decoder) voterewards.Standing {
		return voterewards.Standing{UserID: user, Votes: d.count(), Total: d.count(), ReachedAt: d.time()}
	})
}

// boardKey is a standing's key on the board of span: CompareStandings order.
func boardKey(span [8]byte, s voterewards.Standing) []byte {
	b := binary.BigEndian.AppendUint64(append(make([]byte, 0, boardKeyLen+len(s.UserID)), span[:]...), ^uint64(max(s.Total, 0)))
	return append(appendTime(b, s.ReachedAt), s.UserID...)
}

// decodeBoard reads a board entry (its value is the votes: appendCounts).
func decodeBoard(k, v []byte) (voterewards.Standing, error) {
	if len(k) < boardKeyLen || ^binary.BigEndian.Uint64(k[8:]) > maxCount {
		return voterewards.Standing{}, errBadRecord
	}
	return decode(v, func(d *decoder) voterewards.Standing {
		return voterewards.Standing{UserID: string(k[boardKeyLen:]), Votes: d.count(), Total: int(^binary.BigEndian.Uint64(k[8:])), ReachedAt: getTime(k[16:])}
	})
}
