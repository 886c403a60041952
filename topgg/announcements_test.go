package topgg_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

func TestPostAnnouncement(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		category string
		wantBody string
		wantCat  string
	}{
		{"default", "", `{"title":"v2 is out","content":"Slash commands everywhere."}`, "announcement"},
		{"event", "event", `{"title":"v2 is out","content":"Slash commands everywhere.","category":"event"}`, "event"},
		{"new_feature", "new_feature", `{"title":"v2 is out","content":"Slash commands everywhere.","category":"new_feature"}`, "new_feature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := newClient(t, srv)
			before := time.Now()

			a, err := c.PostAnnouncement(t.Context(), topgg.NewAnnouncement{Title: "v2 is out", Content: "Slash commands everywhere.", Category: tc.category})
			require.NoError(t, err)
			require.Equal(t, "v2 is out", a.Title)
			require.Equal(t, "Slash commands everywhere.", a.Content)
			require.Equal(t, tc.wantCat, a.Category)
			require.WithinRange(t, a.CreatedAt, before.Add(-time.Second), time.Now().Add(time.Second))

			r := onlyRequest(t, srv)
			requireV1(t, srv, r, "POST", "/v1/projects/@me/announcements")
			require.JSONEq(t, tc.wantBody, string(r.Body))
			got := srv.Announcements()
			require.Len(t, got, 1)
			require.Equal(t, string(tc.wantCat), got[0].Category)
		})
	}
}

func TestPostAnnouncementCooldownIsLocal(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	a := topgg.NewAnnouncement{Title: "Hello", Content: "First announcement."}

	_, err := c.PostAnnouncement(t.Context(), a)
	require.NoError(t, err)

	_, err = c.PostAnnouncement(t.Context(), a)
	require.ErrorIs(t, err, topgg.ErrRateLimited)
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local)
	require.Nil(t, rl.API)
	require.InDelta(t, announcementCooldown.Seconds(), rl.RetryAfter.Seconds(), 60)
	require.Len(t, srv.Requests(), 1, "the second announcement must not be sent")

	// The block is the announcements' own: other v1 calls still go out.
	_, err = c.Project(t.Context())
	require.NoError(t, err)
}

func TestPostAnnouncementServerCooldown(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := topgg.NewAnnouncement{Title: "Hello", Content: "First announcement."}

	// Another client (another process) posted first: the service's 429 teaches
	// this one the remaining cooldown.
	_, err := newClient(t, srv).PostAnnouncement(t.Context(), a)
	require.NoError(t, err)
	c := newClient(t, srv)
	_, err = c.PostAnnouncement(t.Context(), a)
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.False(t, rl.Local)
	require.NotNil(t, rl.API)
	require.Equal(t, 429, rl.API.StatusCode)
	require.InDelta(t, (4 * time.Hour).Seconds(), rl.RetryAfter.Seconds(), 60)
	require.Len(t, srv.Requests(), 2)

	_, err = c.PostAnnouncement(t.Context(), a)
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local)
	require.Len(t, srv.Requests(), 2)
}

// TestPostAnnouncementBrokenReply: a 2xx whose body breaks off still means the
// announcement was posted, so the cooldown starts and no second POST goes out.
func TestPostAnnouncementBrokenReply(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := http.NewResponseController(w).Hijack()
		if !assert.NoError(t, err) {
			return
		}
		defer conn.Close()
		// Promise 1,000 bytes, send a few, hang up.
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"title\":\"Hel")
		_ = buf.Flush()
	}))
	t.Cleanup(ts.Close)
	c, err := topgg.New("s3cr3t-value", topgg.WithBaseURL(ts.URL), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	a := topgg.NewAnnouncement{Title: "Hello", Content: "First announcement."}

	_, err = c.PostAnnouncement(t.Context(), a)
	var de *topgg.DecodeError
	require.ErrorAs(t, err, &de)
	require.Equal(t, 200, de.Status)
	require.Contains(t, err.Error(), "posted")
	require.Contains(t, err.Error(), "unreadable")
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the cause stays reachable")
	require.NotContains(t, err.Error(), "s3cr3t")
	require.EqualValues(t, 1, posts.Load())

	_, err = c.PostAnnouncement(t.Context(), a)
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local)
	require.InDelta(t, announcementCooldown.Seconds(), rl.RetryAfter.Seconds(), 60)
	require.EqualValues(t, 1, posts.Load(), "the second announcement must not be sent")
}

// announcementCooldown is the service's limit of one announcement per 4 hours.
const announcementCooldown = 4 * time.Hour
