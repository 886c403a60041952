package voterewards_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

const hookSecret = webhook.Secret("whs_voterewards_bridge_secret")

// noHistory is a vote history that stays empty: every vote the tests see
// comes by webhook.
type noHistory struct{}

func (noHistory) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	return &topgg.VotePage{}, nil
}

// hookedPoller runs a poller on an empty history and a webhook receiver
// whose OnVote is the poller's IngestWebhook, on a real server; it returns
// the receiver's URL.
func hookedPoller(t *testing.T, cfg voterewards.Config) string {
	t.Helper()
	p := startPoller(t, noHistory{}, cfg)
	rcv, err := webhook.New(webhook.Config{Secrets: []webhook.Secret{hookSecret}, LegacyAuth: "v0-auth", OnVote: p.IngestWebhook})
	require.NoError(t, err)
	hs := httptest.NewServer(rcv)
	t.Cleanup(hs.Close)
	return hs.URL
}

// post sends body to url as a v1 (signed) or v0 delivery and returns the status.
func post(t *testing.T, url string, version int, body string) int {
	t.Helper()
	req, err := webhook.NewRequest(context.Background(), url, hookSecret, time.Now(), []byte(body))
	require.NoError(t, err)
	if version == 0 { // v0: the shared secret in Authorization, no signature
		req.Header.Del(webhook.SignatureHeader)
		req.Header.Set("Authorization", "v0-auth")
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestIngestWebhookIsTheReceiversOnVote: a vote the fake service delivers to
// a receiver whose OnVote is Poller.IngestWebhook is stored, answered 204 and
// rewarded once, with its origin, webhook id and query; a v0 vote has its
// origin; a v0 test delivery is no vote; a vote the pipeline can never take
// is answered 400 (not retried).
func TestIngestWebhookIsTheReceiversOnVote(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	rec := newRecorder()
	url := hookedPoller(t, voterewards.Config{Store: voterewards.NewMemoryStore(), OnReward: rec.handle})
	require.NoError(t, srv.AddWebhook(url, string(hookSecret)))

	now := time.Now().UTC()
	srv.AddVoteQuery("ref=abc", topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 2,
		CreatedAt: now, ExpiresAt: now.Add(12 * time.Hour)})
	require.Eventually(t, func() bool { return rec.total() == 1 }, 5*time.Second, 5*time.Millisecond)
	v := rec.nth(0)
	assert.Equal(t, voterewards.OriginWebhook, v.Origin)
	assert.Equal(t, platformID(1), v.PlatformID)
	assert.Equal(t, 2, v.Weight)
	require.NotNil(t, v.Hook)
	assert.Equal(t, topggtest.WebhookVoteID(1), v.Hook.ID)
	assert.Equal(t, map[string]string{"ref": "abc"}, v.Hook.Query)
	d := srv.Deliveries()
	require.Len(t, d, 1)
	require.Eventually(t, func() bool { d = srv.Deliveries(); return d[0].Done }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, http.StatusNoContent, d[0].Attempts[len(d[0].Attempts)-1].Status)

	assert.Equal(t, http.StatusNoContent, post(t, url, 0, `{"bot":"1","user":"`+platformID(2)+`","type":"upvote","isWeekend":false}`))
	require.Eventually(t, func() bool { return rec.total() == 2 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, voterewards.OriginWebhookV0, rec.nth(1).Origin)

	assert.Equal(t, http.StatusNoContent, post(t, url, 0, `{"bot":"1","user":"`+platformID(3)+`","type":"test","isWeekend":false}`))
	long := strings.Repeat("9", 2000) // an id no store keeps
	assert.Equal(t, http.StatusBadRequest, post(t, url, 0, `{"bot":"1","user":"`+long+`","type":"upvote"}`))
	assert.Never(t, func() bool { return rec.total() != 2 }, 100*time.Millisecond, 10*time.Millisecond,
		"the test delivery or the invalid vote was rewarded")
}

// panicStore is a store whose Ingest panics, as a store with a bug would.
type panicStore struct{ *voterewards.MemoryStore }

func (s panicStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if len(votes) > 0 && votes[0].Origin != voterewards.OriginHistory {
		panic("store bug")
	}
	return s.MemoryStore.Ingest(ctx, cp, votes, grace)
}

// TestIngestWebhookStorePanicIsAnswered500: a panic in the store under
// IngestWebhook reaches the peer as a 500 (Top.gg retries), not as a
// dropped connection.
func TestIngestWebhookStorePanicIsAnswered500(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	url := hookedPoller(t, voterewards.Config{Store: panicStore{voterewards.NewMemory()}, OnReward: rec.handle})
	body := `{"type":"vote.create","data":{"id":"1","weight":1,"created_at":"` + time.Now().UTC().Format(time.RFC3339Nano) +
		`","expires_at":"` + time.Now().UTC().Add(time.Hour).Format(time.RFC3339Nano) + `","user":{"platform_id":"` + platformID(1) + `"}}}`
	assert.Equal(t, http.StatusInternalServerError, post(t, url, 1, body))
	assert.Zero(t, rec.total())
}

// nth returns the n-th vote handled.
func (r *recorder) nth(n int) voterewards.Vote {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.votes[r.order[n]]
}

// TestExpiredWebhookVoteIsNotCountedAgain: the poll rewards an expired vote
// from the history and prunes it from the dedup set (it lies before the
// newest vote less the overlap); a webhook delivery of that vote arriving
// afterwards (a replay, or a fake's late retry) is answered nil and neither
// rewarded nor counted a second time. Without the check in IngestWebhook the
// pruned vote is stored again: two rewards, Votes 2.
func TestExpiredWebhookVoteIsNotCountedAgain(t *testing.T) {
	t.Parallel()
	_, store, rec, p, old := prunedVote(t)

	require.NoError(t, p.IngestWebhook(context.Background(), webhook.Vote{
		Vote: topgg.Vote{
			UserID:     userID(1),
			PlatformID: platformID(1),
			Weight:     1,
			CreatedAt:  old.Add(300 * time.Nanosecond),
			ExpiresAt:  old.Add(voterewards.VoteLifetime),
		},
		Version: 1,
		ID:      "late",
	}))
	assert.Never(t, func() bool { return rec.total() != 2 }, 200*time.Millisecond, 10*time.Millisecond, "the late webhook vote was rewarded again")
	st, err := store.Stats(context.Background(), platformID(1))
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes)
}
