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
// transactions, until another process holds the lease; then continues it.
// Each vote the paused leader was rewarding is credited once: by the paused
// leader's own commit (no newer token had written yet) or, refused or rolled
// back, by the new leader; every voter's points are exact.
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
	name := fr.names[leader]
	before := committedBy(t, fr.pool, name)
	require.NoError(t, leader.cmd.Process.Signal(syscall.SIGCONT))

	fr.awaitAllCredited()
	fr.checkExact()
	after := committedBy(t, fr.pool, name)
	inFlight := 0
	for _, line := range leader.linesWith("credited ") {
		if key, _, _ := strings.Cut(line, " "); !before[key] {
			inFlight++
		}
	}
	assert.Positive(t, inFlight, "the pause caught no credit in an open transaction: the test proves nothing")
	t.Logf("paused leader (token %s): %d credits in open transactions when paused past its lease, %d committed by it "+
		"once continued, the rest by the new leader; %d votes credited once each", token, inFlight, len(after)-len(before),
		len(fr.set.votes))
}

// committedBy returns the votes whose credit process name committed.
func committedBy(t *testing.T, pool *pgxpool.Pool, name string) map[string]bool {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT vote_key FROM `+fleetApp+`.credits WHERE split_part(tag, ' ', 1) = $1`, name)
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
