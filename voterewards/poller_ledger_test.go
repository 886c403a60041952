package voterewards_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestHandlersReceiveTheLedger: end to end, through the fake service's
// history and a signed webhook delivery, each reward carries the voter's
// Stats as that vote left them: a first vote read from the history has
// Streak 1; the user's next vote, delivered by webhook a day later, has
// Streak 2; the history's record of that same vote, read by later polls,
// is neither rewarded nor counted. Poller.Stats and Poller.Leaderboard read
// the same ledger. On both stores of this package.
func TestHandlersReceiveTheLedger(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) voterewards.Store{
		"memory": func(*testing.T) voterewards.Store { return voterewards.NewMemoryStore() },
		"bolt": func(t *testing.T) voterewards.Store {
			s, err := boltstate.Open(t.TempDir())
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			now := time.Now().UTC()
			first := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 2, CreatedAt: now.Add(-25 * time.Hour)}
			srv.AddVote(first) // in the history only: no webhook yet
			rec := newRecorder()
			p := startPoller(t, newClient(t, srv), voterewards.Config{
				Store: open(t), OnReward: rec.handle, Lookback: 48 * time.Hour,
			})
			require.Eventually(t, func() bool { return rec.total() == 1 }, 5*time.Second, 5*time.Millisecond, "the history's vote")
			v := rec.nth(0)
			assert.Equal(t, voterewards.OriginHistory, v.Origin)
			assert.Equal(t, platformID(1), v.Stats.UserID)
			assert.Equal(t, 1, v.Stats.Streak)
			assert.Equal(t, 2, v.Stats.Total)

			rcv, err := webhook.New(webhook.Config{Secrets: []webhook.Secret{hookSecret}, OnVote: p.IngestWebhook})
			require.NoError(t, err)
			hs := httptest.NewServer(rcv)
			t.Cleanup(hs.Close)
			require.NoError(t, srv.AddWebhook(hs.URL, string(hookSecret)))
			// The webhook comes first: the next poll is held (the poller makes
			// one at a time) until the webhook's vote is in; before, a poll
			// under load could read the vote first and make it the history's.
			require.NoError(t, srv.Inject(topggtest.Fault{Method: http.MethodGet, Path: "/v1/projects/@me/votes", Delay: 3 * time.Second}))
			require.Eventually(t, func() bool { return srv.Held() == 1 }, 5*time.Second, time.Millisecond, "no poll held")
			srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 1, CreatedAt: now}) // webhook, then history
			require.Eventually(t, func() bool { return rec.total() == 2 }, 5*time.Second, 5*time.Millisecond, "the webhook's vote")
			v = rec.nth(1)
			assert.Equal(t, voterewards.OriginWebhook, v.Origin)
			assert.Equal(t, 2, v.Stats.Streak, "the second vote in time continues the streak")
			assert.Equal(t, 2, v.Stats.Votes)
			assert.Equal(t, 3, v.Stats.Total)

			// The history's record of the webhook's vote: read, not counted.
			n := len(votesRequests(srv))
			require.Eventually(t, func() bool { return len(votesRequests(srv)) >= n+3 }, 10*time.Second, time.Millisecond, "polling stopped")
			assert.Equal(t, 2, rec.total(), "the history's record is no new reward")
			st, err := p.Stats(t.Context(), platformID(1))
			require.NoError(t, err)
			assert.Equal(t, v.Stats, st, "the ledger counted the vote once")
			board, err := p.Leaderboard(t.Context(), time.Time{}, 10)
			require.NoError(t, err)
			require.Len(t, board, 1)
			assert.Equal(t, voterewards.Standing{UserID: platformID(1), Votes: 2, Total: 3, ReachedAt: v.CreatedAt}, board[0])
			_, err = p.Leaderboard(t.Context(), time.Time{}, 0)
			require.ErrorIs(t, err, voterewards.ErrBadLeaderboard)
		})
	}
}
