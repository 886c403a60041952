package boltstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// ledgerTx is the ledger's buckets in one write transaction (its voters'
// records in the voters bucket, under ledgerKey).
type ledgerTx struct {
	stats, months, board *bolt.Bucket
}

func openLedger(tx *bolt.Tx) ledgerTx {
	return ledgerTx{tx.Bucket([]byte(bucketVoters)), tx.Bucket([]byte(bucketMonths)), tx.Bucket([]byte(bucketBoard))}
}

// count counts v in its voter's ledger, its month's board and the all-time
// board, in a bounded number of reads and writes, and returns the new Stats.
func (l ledgerTx) count(v voterewards.Vote, grace time.Duration) (voterewards.Stats, error) {
	id := voter(v)
	old, err := readStats(l.stats, id)
	if err != nil {
		return voterewards.Stats{}, fmt.Errorf("ledger of voter %q: %w", id, err)
	}
	st := old.Add(v, grace)
	if last := time.Unix(0, math.MaxInt64).UTC(); st.StreakUntil.After(last) {
		// A "forever" StreakGrace puts StreakUntil past what the file's
		// times (int64 nanoseconds) hold: keep the last instant they do.
		st.StreakUntil = last
	}
	if err := errors.Join(
		l.stats.Put(ledgerKey(id), encodeLedger(st)),
		l.rank(span(time.Time{}), allTimeStanding(old), allTimeStanding(st)),
		l.countMonth(id, v, old),
	); err != nil {
		return voterewards.Stats{}, err
	}
	return st, nil
}

// countMonth counts v in its voter's standing of v's month, and on that
// month's board. The newest month's standing is in the ledger record; older
// months' are in the months bucket, written once per voter and month.
func (l ledgerTx) countMonth(id string, v voterewards.Vote, old voterewards.Stats) error {
	m := voterewards.MonthOf(v.CreatedAt)
	newest := voterewards.Standing{UserID: id, Votes: old.MonthVotes, Total: old.MonthTotal, ReachedAt: old.LastVote}
	var prev voterewards.Standing
	switch {
	case old.Votes == 0:
	case m.Equal(old.Month):
		prev = newest
	case m.After(old.Month): // the old month is done: keep its standing for late votes
		if err := l.months.Put(timeKey(old.Month, id), encodeStanding(newest)); err != nil {
			return err
		}
	default: // a late vote of an older month
		if b := l.months.Get(timeKey(m, id)); b != nil {
			var err error
			if prev, err = decodeStanding(id, b); err != nil {
				return fmt.Errorf("month standing of voter %q: %w", id, err)
			}
		}
	}
	// Stats.Add counts a standing as it counts a voter's Votes, Total and LastVote.
	st := allTimeStanding(voterewards.Stats{UserID: id, Votes: prev.Votes, Total: prev.Total, LastVote: prev.ReachedAt}.Add(v, 0))
	if m.Before(old.Month) {
		if err := l.months.Put(timeKey(m, id), encodeStanding(st)); err != nil {
			return err
		}
	}
	return l.rank(span(m), prev, st)
}

// rank moves a voter's line on the board of span from prev (if counted) to st.
func (l ledgerTx) rank(span [8]byte, prev, st voterewards.Standing) error {
	if prev.Votes > 0 {
		if err := l.board.Delete(boardKey(span, prev)); err != nil {
			return err
		}
	}
	return l.board.Put(boardKey(span, st), appendCounts(nil, st.Votes))
}

// allTimeStanding is a voter's line on the all-time board.
func allTimeStanding(s voterewards.Stats) voterewards.Standing {
	return voterewards.Standing{UserID: s.UserID, Votes: s.Votes, Total: s.Total, ReachedAt: s.LastVote}
}

// Stats implements [voterewards.Store]: one read of the voter's record.
func (s *State) Stats(ctx context.Context, user string) (voterewards.Stats, error) {
	if user == "" {
		return voterewards.Stats{}, fmt.Errorf("boltstate: Stats: %w (an empty user id: no voter has it)", topgg.ErrNilArgument)
	}
	var st voterewards.Stats
	err := s.read(ctx, fmt.Sprintf("the ledger of %q", user), func(tx *bolt.Tx) (err error) {
		st, err = readStats(tx.Bucket([]byte(bucketVoters)), user)
		return err
	})
	return st, err // zero on an error
}

// readStats reads user's ledger record in the voters bucket b: no record is no votes.
func readStats(b *bolt.Bucket, user string) (voterewards.Stats, error) {
	if v := b.Get(ledgerKey(user)); v != nil {
		return decodeLedger(user, v)
	}
	return voterewards.Stats{UserID: user}, nil
}

// Leaderboard implements [voterewards.Store]: the first n keys of the board's span.
func (s *State) Leaderboard(ctx context.Context, month time.Time, n int) ([]voterewards.Standing, error) {
	if n < 1 || n > voterewards.MaxLeaderboard {
		return nil, voterewards.ErrBadLeaderboard
	}
	sp := span(month)
	var out []voterewards.Standing
	err := s.read(ctx, "the leaderboard", func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(bucketBoard)).Cursor()
		for k, v := c.Seek(sp[:]); k != nil && bytes.HasPrefix(k, sp[:]) && len(out) < n; k, v = c.Next() {
			st, err := decodeBoard(k, v)
			if err != nil {
				return err
			}
			out = append(out, st)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
