package topggtest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

const hookSecret = "whs_topggtest_receiver_secret"

func newServer(t *testing.T, opts ...topggtest.Option) *topggtest.Server {
	t.Helper()
	s, err := topggtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// done waits until the server has n deliveries, all finished.
func done(t *testing.T, s *topggtest.Server, n int) []topggtest.Delivery {
	t.Helper()
	var ds []topggtest.Delivery
	require.Eventually(t, func() bool {
		ds = s.Deliveries()
		if len(ds) != n {
			return false
		}
		for _, d := range ds {
			if !d.Done {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond)
	return ds
}

func TestWebhookVoteIsSignedAndVerifiedByTheReceiver(t *testing.T) {
	t.Parallel()
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	s := newServer(t, topggtest.WithWebhook(rcv.URL, hookSecret))

	created := time.Now().Add(-time.Minute).UTC().Truncate(100 * time.Nanosecond)
	s.AddVoteQuery("ref=abc", topggtest.Vote{UserID: "900000000000000001", PlatformID: "160105994217586689", Weight: 2,
		CreatedAt: created})

	ds := done(t, s, 1)
	require.Len(t, ds[0].Attempts, 1)
	a := ds[0].Attempts[0]
	assert.Equal(t, http.StatusNoContent, a.Status)
	assert.NoError(t, a.Err)
	assert.True(t, ds[0].Delivered())
	assert.Equal(t, 1, ds[0].Version)
	assert.Equal(t, "vote.create", ds[0].Type)
	assert.Regexp(t, `^t=\d+,v1=[0-9a-f]{64}$`, a.Header.Get("X-Topgg-Signature"))
	assert.NotEmpty(t, a.Header.Get("X-Topgg-Trace"))
	// The real shapes: 7 fractional digits and +00:00.
	assert.Regexp(t, regexp.MustCompile(`"created_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}\+00:00"`), string(ds[0].Body))

	project := topggtest.DiscordBot()
	assert.Equal(t, []webhook.Vote{{
		Vote: topgg.Vote{
			UserID:     "900000000000000001",
			PlatformID: "160105994217586689",
			Weight:     2,
			CreatedAt:  created,
			ExpiresAt:  created.Add(12 * time.Hour),
		},
		Version:           1,
		ID:                topggtest.WebhookVoteID(1),
		UserName:          "voter160105994217586689",
		AvatarURL:         "https://cdn.discordapp.com/embed/avatars/0.png",
		ProjectID:         project.ID,
		ProjectPlatformID: project.PlatformID,
		Query:             map[string]string{"ref": "abc"},
	}}, rcv.Votes())
}

func TestWebhookRetriesOn5xxAndTimeoutsOnSchedule(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	delays := []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond}
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 3:
			// No answer: the sender times out and hangs up, which the server
			// sees once the body is read.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	s := newServer(t, topggtest.WithWebhook(srv.URL, hookSecret), topggtest.WithWebhookRetries(timeout, delays...))

	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	d := done(t, s, 1)[0]
	require.Len(t, d.Attempts, 4)
	assert.Equal(t, []int{500, 503, 0, 204}, statuses(d))
	assert.ErrorIs(t, d.Attempts[2].Err, context.DeadlineExceeded)
	assert.True(t, d.Delivered())
	for i := 1; i < 4; i++ {
		gap := d.Attempts[i].At.Sub(d.Attempts[i-1].At)
		want := delays[i-1]
		if i == 3 {
			want += timeout // the timed-out attempt waited for its answer first
		}
		assert.GreaterOrEqual(t, gap, want, "retry %d came early", i)
	}
}

func statuses(d topggtest.Delivery) []int {
	out := make([]int, len(d.Attempts))
	for i, a := range d.Attempts {
		out[i] = a.Status
	}
	return out
}

func TestWebhookGivesUpAfterTheLastRetry(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	s := newServer(t, topggtest.WithWebhook(srv.URL, hookSecret),
		topggtest.WithWebhookRetries(time.Second, time.Millisecond, time.Millisecond, time.Millisecond))
	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	d := done(t, s, 1)[0]
	assert.Equal(t, []int{502, 502, 502, 502}, statuses(d), "one attempt and 3 retries")
	assert.False(t, d.Delivered())
}

func TestWebhookNeverRetries4xx(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 401, 403, 404, 405, 413, 429} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
		}))
		t.Cleanup(srv.Close)
		s := newServer(t, topggtest.WithWebhook(srv.URL, hookSecret),
			topggtest.WithWebhookRetries(time.Second, time.Millisecond, time.Millisecond, time.Millisecond))
		s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
		d := done(t, s, 1)[0]
		assert.Equal(t, []int{status}, statuses(d))
	}
}

func TestWebhookRecordsTheAnswers(t *testing.T) {
	t.Parallel()
	rcv := testkit.NewReceiver(t, webhook.Config{
		Secrets: []webhook.Secret{"whs_other", hookSecret},
		OnIntegrationCreate: func(context.Context, webhook.IntegrationCreate) (webhook.IntegrationAnswer, error) {
			return webhook.IntegrationAnswer{WebhookURL: "https://bot.example/hook", Routes: []string{"vote.create"}}, nil
		},
	})
	s := newServer(t, topggtest.WithWebhook(rcv.URL, hookSecret), topggtest.WithWebhook(rcv.URL, "whs_unknown"))

	require.NoError(t, s.SendWebhookEvent("integration.create", map[string]any{
		"connection_id": "112402021105124", "webhook_secret": "whs_new",
		"project": map[string]string{"id": "1"}, "user": map[string]string{"id": "2"},
	}))
	ds := done(t, s, 2)
	byURLSecret := map[int]topggtest.Delivery{}
	for _, d := range ds {
		byURLSecret[d.Attempts[0].Status] = d
	}
	require.Contains(t, byURLSecret, http.StatusOK)
	require.Contains(t, byURLSecret, http.StatusForbidden, "the receiver does not know whs_unknown")
	assert.JSONEq(t, `{"webhook_url":"https://bot.example/hook","routes":["vote.create"]}`,
		string(byURLSecret[http.StatusOK].Attempts[0].Body))
	assert.Contains(t, string(byURLSecret[http.StatusForbidden].Attempts[0].Body), "signature")
	assert.Len(t, byURLSecret[http.StatusForbidden].Attempts, 1)
	require.Len(t, rcv.Events(), 1)
	assert.Equal(t, webhook.Secret("whs_new"), rcv.Events()[0].IntegrationCreate.WebhookSecret)

	assert.Error(t, s.SendWebhookEvent("x", json.RawMessage(`{`)), "unencodable data is an error, nothing sent")
	assert.Len(t, s.Deliveries(), 2)
}

func TestWebhookTestEvent(t *testing.T) {
	t.Parallel()
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	legacy := testkit.NewReceiver(t, webhook.Config{LegacyAuth: "v0-auth"})
	s := newServer(t, topggtest.WithWebhook(rcv.URL, hookSecret), topggtest.WithLegacyWebhook(legacy.URL, "v0-auth"))

	s.SendWebhookTest()
	done(t, s, 2)
	require.Len(t, rcv.Events(), 1)
	ev := rcv.Events()[0]
	assert.Equal(t, "webhook.test", ev.Type)
	assert.Equal(t, topggtest.DiscordBot().ID, ev.Test.Project.ID)
	assert.NotEmpty(t, ev.Test.User.PlatformID)
	assert.Empty(t, rcv.Votes(), "a v1 test is no vote")

	require.Len(t, legacy.Votes(), 1)
	assert.True(t, legacy.Votes()[0].Test)
	assert.Equal(t, 0, legacy.Votes()[0].Version)
}

func TestLegacyWebhookVote(t *testing.T) {
	t.Parallel()
	for _, project := range []topggtest.Project{topggtest.DiscordBot(), topggtest.DiscordServer()} {
		rcv := testkit.NewReceiver(t, webhook.Config{LegacyAuth: "v0-auth"})
		s := newServer(t, topggtest.WithProject(project), topggtest.WithLegacyWebhook(rcv.URL, "v0-auth"))
		s.AddVoteQuery("?ref=a+b&x=1", topggtest.Vote{UserID: "1", PlatformID: "160105994217586689", Weight: 2})
		d := done(t, s, 1)[0]
		assert.Equal(t, 0, d.Version)
		assert.Equal(t, "v0-auth", d.Attempts[0].Header.Get("Authorization"))
		assert.Empty(t, d.Attempts[0].Header.Get("X-Topgg-Signature"))
		assert.Equal(t, []webhook.Vote{{
			Vote:              topgg.Vote{PlatformID: "160105994217586689", Weight: 2},
			ProjectPlatformID: project.PlatformID,
			Guild:             project.Type == "server",
			Query:             map[string]string{"ref": "a b", "x": "1"},
		}}, rcv.Votes())
	}
}

func TestWebhookSignsWithRealTimeAndDatesVotesWithTheServerClock(t *testing.T) {
	t.Parallel()
	// A server clock far from the receiver's real one: the signature is
	// still fresh, the vote keeps the server's dates.
	past := time.Date(2026, 1, 17, 23, 36, 6, 347320000, time.UTC)
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	s := newServer(t, topggtest.WithWebhook(rcv.URL, hookSecret), topggtest.WithNow(func() time.Time { return past }))
	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	d := done(t, s, 1)[0]
	assert.Equal(t, []int{http.StatusNoContent}, statuses(d))
	assert.Contains(t, string(d.Body), `"created_at":"2026-01-17T23:36:06.3473200+00:00"`)
	require.Len(t, rcv.Votes(), 1)
	assert.Equal(t, past, rcv.Votes()[0].CreatedAt)
}

func TestCloseEndsDeliveriesAndLeavesNoGoroutine(t *testing.T) {
	// Not parallel: goleak looks at the whole process.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			// The server sees the client hang up only once the body is read.
			_, _ = io.Copy(io.Discard, r.Body)
			hung <- struct{}{}
			<-r.Context().Done()
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	s, err := topggtest.NewServer(
		topggtest.WithWebhook(srv.URL+"/fail", hookSecret), // waits an hour to retry
		topggtest.WithWebhook(srv.URL+"/hang", hookSecret), // in flight at Close
		topggtest.WithWebhookRetries(time.Hour, time.Hour))
	require.NoError(t, err)
	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	<-hung
	require.Eventually(t, func() bool {
		for _, d := range s.Deliveries() {
			if len(d.Attempts) == 1 && d.Attempts[0].Status == 500 {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)

	start := time.Now()
	s.Close()
	assert.Less(t, time.Since(start), 5*time.Second, "Close does not wait out retries")
	for _, d := range s.Deliveries() {
		assert.True(t, d.Done)
		assert.Len(t, d.Attempts, 1)
	}
	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"}) // after Close: no delivery
	s.SendWebhookTest()
	assert.Len(t, s.Deliveries(), 2)
}

// TestAddWebhookPointsARunningServerAtAReceiver: a receiver started after the
// fake gets the votes added from then on, signed like the others, and the
// events; a malformed URL or secret is an error and adds nothing.
func TestAddWebhookPointsARunningServerAtAReceiver(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.AddVote(topggtest.Vote{UserID: "900000000000000001", PlatformID: "160105994217586689"})
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	for _, bad := range []struct{ url, secret string }{
		{"127.0.0.1:1/hook", hookSecret}, {rcv.URL, ""}, {rcv.URL, "topggtest_receiver_secret"},
		{rcv.URL, hookSecret + ",whs_b"}, {rcv.URL, hookSecret + "\n"},
	} {
		assert.Error(t, s.AddWebhook(bad.url, bad.secret), "%q %q", bad.url, bad.secret)
	}
	require.NoError(t, s.AddWebhook(rcv.URL, hookSecret))

	s.AddVote(topggtest.Vote{UserID: "900000000000000002", PlatformID: "160105994217586690", Weight: 2})
	s.SendWebhookTest()
	ds := done(t, s, 2)
	for _, d := range ds {
		assert.Equal(t, rcv.URL, d.URL)
		assert.True(t, d.Delivered(), "%+v", d)
	}
	votes := rcv.Votes()
	require.Len(t, votes, 1, "only the vote added after AddWebhook is delivered")
	assert.Equal(t, "160105994217586690", votes[0].PlatformID)
	assert.Equal(t, 2, votes[0].Weight)
	assert.Len(t, rcv.Events(), 2)
}
