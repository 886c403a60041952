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
//	ledger:   user -> version(1) stats
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
	// statsLen bounds the length of appendVoteStats's bytes, but the user.
	statsLen = 2 + 9*binary.MaxVarintLen64 + 24
)

// span is the board span of month's UTC month, or of all time if month is
// zero: eight zero bytes, below every month's.
func span(month time.Time) [8]byte {
	var k [8]byte
	if !month.IsZero() {
		putTime(k[:], voterewards.MonthOf(month))
	}
	return k
}

func appendTime(b []byte, t time.Time) []byte {
	var k [8]byte
	putTime(k[:], t)
	return append(b, k[:]...)
}

func appendStats(b []byte, s voterewards.Stats) []byte {
	for _, n := range []int{s.Votes, s.Total, s.Streak, s.BestStreak} {
		b = binary.AppendUvarint(b, uint64(max(n, 0)))
	}
	b = appendTime(appendTime(b, s.StreakUntil), s.Month)
	b = binary.AppendUvarint(b, uint64(max(s.MonthVotes, 0)))
	b = binary.AppendUvarint(b, uint64(max(s.MonthTotal, 0)))
	return appendTime(b, s.LastVote)
}

// encodeLedger encodes a voter's ledger record (the user is its key).
func encodeLedger(s voterewards.Stats) []byte {
	return appendStats(append(make([]byte, 0, 64), ledgerVersion), s)
}

func decodeLedger(user string, b []byte) (voterewards.Stats, error) {
	if len(b) < 1 || b[0] != ledgerVersion {
		return voterewards.Stats{}, errBadRecord
	}
	d := decoder{b: b[1:]}
	s := d.stats()
	s.UserID = user
	if d.bad || len(d.b) != 0 {
		return voterewards.Stats{}, errBadRecord
	}
	return s, nil
}

func (d *decoder) count() int { return int(d.uvarint(maxCount)) }

func (d *decoder) time() time.Time {
	if d.bad || len(d.b) < 8 {
		d.bad = true
		return time.Time{}
	}
	t := getTime(d.b[:8])
	d.b = d.b[8:]
	return t
}

// stats reads the fields of appendStats, but the user.
func (d *decoder) stats() voterewards.Stats {
	var s voterewards.Stats
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

// v3 reads the fields version 3 added.
func (d *decoder) v3(v *voterewards.Vote) {
	if d.bad || len(d.b) < 1 || d.b[0] > 1 {
		d.bad = true
		return
	}
	flag := d.b[0]
	d.b = d.b[1:]
	if flag == 1 {
		user := d.string()
		v.Stats = d.stats()
		v.Stats.UserID = user
	}
}

// monthKey is a voter's key in the months bucket.
func monthKey(month time.Time, user string) []byte {
	return append(appendTime(make([]byte, 0, 8+len(user)), month), user...)
}

func encodeStanding(s voterewards.Standing) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 24), uint64(max(s.Votes, 0)))
	b = binary.AppendUvarint(b, uint64(max(s.Total, 0)))
	return appendTime(b, s.ReachedAt)
}

func decodeStanding(user string, b []byte) (voterewards.Standing, error) {
	d := decoder{b: b}
	s := voterewards.Standing{UserID: user, Votes: d.count(), Total: d.count(), ReachedAt: d.time()}
	if d.bad || len(d.b) != 0 {
		return voterewards.Standing{}, errBadRecord
	}
	return s, nil
}

// boardKey is a standing's key on the board of span: CompareStandings order.
func boardKey(span [8]byte, s voterewards.Standing) []byte {
	b := append(make([]byte, 0, boardKeyLen+len(s.UserID)), span[:]...)
	b = binary.BigEndian.AppendUint64(b, ^uint64(max(s.Total, 0)))
	return append(appendTime(b, s.ReachedAt), s.UserID...)
}

// encodeVotes is a board entry's value.
func encodeVotes(n int) []byte { return binary.AppendUvarint(nil, uint64(max(n, 0))) }

// decodeBoard reads a board entry.
func decodeBoard(k, v []byte) (voterewards.Standing, error) {
	if len(k) < boardKeyLen {
		return voterewards.Standing{}, errBadRecord
	}
	total := ^binary.BigEndian.Uint64(k[8:16])
	votes, n := binary.Uvarint(v)
	if total > maxCount || n <= 0 || n != len(v) || votes > maxCount {
		return voterewards.Standing{}, errBadRecord
	}
	return voterewards.Standing{UserID: string(k[boardKeyLen:]), Votes: int(votes), Total: int(total), ReachedAt: getTime(k[16:24])}, nil
}
