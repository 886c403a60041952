//go:build unix

package pgstore_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
)

// TestFleetOnPostgresPausedLeader pauses the leader of a 3-process fleet
// (SIGSTOP) in the middle of rewarding, with credits written in open
// transactions, until another process holds the lease. The new leader must
// credit votes within a bound (5x the lease's TTL, pgstore.Config.TxTimeout
// being the TTL) while the old one is still stopped: PostgreSQL aborts the
// paused transactions, releasing their locks. Then the paused leader is
// continued: it commits nothing more (its transactions were aborted, and the
// new term raised the fence), each vote is credited once and every voter's
// points are exact.
func TestFleetOnPostgresPausedLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("pauses child processes for several seconds")
	}
	t.Parallel()
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	fr := newFleetRun(t, rng, 50*time.Millisecond) // the pause lands inside open transactions
	leader, token := awaitCredits(t, fr.procs, 1+rng.IntN(20))
	require.NoError(t, leader.cmd.Process.Signal(syscall.SIGSTOP))
	paused, err := strconv.ParseInt(token, 10, 64)
	require.NoError(t, err)
	rdb := fr.rds.Client(t)
	require.Eventually(t, func() bool {
		v, err := rdb.Get(ctx, fleet.Key(fleetBot, "lease")).Result()
		_, tok, _ := strings.Cut(v, ":")
		n, _ := strconv.ParseInt(tok, 10, 64)
		return err == nil && n > paused
	}, 10*fleetLeaseTTL, 10*time.Millisecond, "no process took the lease of the paused leader")
	newLease := time.Now()
	name := fr.names[leader]
	before := committedBy(t, fr.pool, name, paused)
	require.Eventually(t, func() bool { return creditsAfter(t, fr.pool, paused) > 0 }, fleetStallBound, 10*time.Millisecond,
		"the new leader credited nothing within %v while the old one was paused", fleetStallBound)
	stalled := time.Since(newLease)
	require.Equal(t, before, committedBy(t, fr.pool, name, paused), "the paused leader committed while stopped")
	require.NoError(t, leader.cmd.Process.Signal(syscall.SIGCONT))

	fr.awaitAllCredited()
	fr.checkExact()
	after := committedBy(t, fr.pool, name, paused)
	inFlight := 0
	for _, line := range leader.linesWith("credited ") {
		if key, _, _ := strings.Cut(line, " "); !before[key] {
			inFlight++
		}
	}
	assert.Positive(t, inFlight, "the pause caught no credit in an open transaction: the test proves nothing")
	assert.Equal(t, before, after, "the paused leader committed once continued: its transactions were not aborted, "+
		"or its term was not fenced")
	t.Logf("paused leader (token %s): %d credits in open transactions when paused past its lease, %d committed by it "+
		"once continued; the new leader's first credit %v after it took the lease; %d votes credited once each",
		token, inFlight, len(after)-len(before), stalled.Round(time.Millisecond), len(fr.set.votes))
}

// fleetStallBound is how long a paused leader may keep the new one from
// crediting: its transactions' idle time (TxTimeout = the lease's TTL), the
// new term's start, and slack for a loaded machine.
const fleetStallBound = 5 * fleetLeaseTTL

// creditsAfter returns how many credits of terms newer than token were
// committed.
func creditsAfter(t *testing.T, pool *pgxpool.Pool, token int64) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM `+fleetApp+`.credits
		WHERE split_part(tag, ' ', 2)::bigint > $1`, token).Scan(&n))
	return n
}

// committedBy returns the votes whose credit process name committed in a
// term no newer than token: once continued, the paused process may win a
// later term and credit votes in it, rightly.
func committedBy(t *testing.T, pool *pgxpool.Pool, name string, token int64) map[string]bool {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT vote_key FROM `+fleetApp+`.credits
		WHERE split_part(tag, ' ', 1) = $1 AND split_part(tag, ' ', 2)::bigint <= $2`, name, token)
	require.NoError(t, err)
	out := map[string]bool{}
	for rows.Next() {
		var key string
		require.NoError(t, rows.Scan(&key))
		out[key] = true
	}
	require.NoError(t, rows.Err())
	return out
}
