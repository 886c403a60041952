package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// base is the tests' fixed time.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// vote makes a sanitized vote of voter u created at created.
func vote(u int, created time.Time) voterewards.Vote {
	return voterewards.Vote{Vote: topgg.Vote{
		UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u), Weight: 1 + u%2,
		CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime),
	}, Origin: voterewards.OriginWebhook}
}

func ingest(t *testing.T, s voterewards.Store, cp *voterewards.Checkpoint, votes ...voterewards.Vote) []voterewards.Vote {
	t.Helper()
	added, err := s.Ingest(context.Background(), cp, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	return added
}

// lease is a settable fence token, as a fleet's lease would give it.
type lease struct{ tok atomic.Int64 }

func (l *lease) token() int64 { return l.tok.Load() }

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
