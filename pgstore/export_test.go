package pgstore

import "time"

// SetFollowCheck sets how often s's Follow checks for lost notifications.
func SetFollowCheck(s *Store, d time.Duration) { s.followCheck = d }

// LoseNotifications makes s notify a channel no Follow listens to, as if
// every notification of its Ingests were lost.
func LoseNotifications(s *Store) { s.channel += "_lost" }

// LockKey is the advisory lock key s's Ingest takes for voter.
func LockKey(s *Store, voter string) int64 { return s.lockKeys([]string{voter})[0] }

// Queued is how many Ingests wait for s's group commit to take them.
func Queued(s *Store) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.queue)
}

// LedgerReads is how many times s's Ingest read ledgers before writing.
func LedgerReads(s *Store) int64 { return s.reads.Load() }

// MaxBatch bounds the Ingests one group commit writes.
const MaxBatch = maxBatch

// MonthBoardQuery is the SQL of s's Leaderboard of a month ($1: the month in
// Unix nanoseconds, $2: n).
func MonthBoardQuery(s *Store) string { return s.q.monthBoard }
