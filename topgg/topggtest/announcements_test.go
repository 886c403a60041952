package topggtest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

func announce(title, content string) map[string]string {
	return map[string]string{"title": title, "content": content}
}

func TestAnnouncementLengths(t *testing.T) {
	t.Parallel()
	okTitle, okContent := "Hey", strings.Repeat("ü", 10)
	for _, c := range []struct {
		name           string
		title, content string
		want           int
	}{
		{"title 2", "日本", okContent, 422},
		{"title 3", "日本語", okContent, 200},
		{"title 100", strings.Repeat("é", 100), okContent, 200},
		{"title 101", strings.Repeat("é", 101), okContent, 422},
		{"content 9", okTitle, strings.Repeat("ü", 9), 422},
		{"content 10", okTitle, strings.Repeat("ü", 10), 200},
		{"content 2000", okTitle, strings.Repeat("ü", 2000), 200},
		{"content 2001", okTitle, strings.Repeat("ü", 2001), 422},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t) // one each: the cooldown would refuse a second success
			r := v1(t, s, http.MethodPost, "/projects/@me/announcements", announce(c.title, c.content))
			if c.want == 422 {
				requireProblem(t, r, 422)
				require.Empty(t, s.Announcements())
				return
			}
			requireStatus(t, r, c.want)
			require.Len(t, s.Announcements(), 1)
		})
	}
}

func TestAnnouncementShape(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for name, body := range map[string]string{
		"missing title":    `{"content":"0123456789"}`,
		"missing content":  `{"title":"abc"}`,
		"bad category":     `{"title":"abc","content":"0123456789","category":"news"}`,
		"unknown member":   `{"title":"abc","content":"0123456789","description":"x"}`,
		"title not string": `{"title":123,"content":"0123456789"}`,
		"empty":            ``,
	} {
		t.Run(name, func(t *testing.T) {
			requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/announcements", body), 422)
		})
	}
	require.Empty(t, s.Announcements())
}

func TestAnnouncementCategoriesAndResponse(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	for _, cat := range []string{"", "announcement", "event", "new_feature"} {
		body := map[string]string{"title": "News", "content": "Something happened."}
		want := "announcement"
		if cat != "" {
			body["category"] = cat
			want = cat
		}
		r := v1(t, s, http.MethodPost, "/projects/@me/announcements", body)
		requireStatus(t, r, http.StatusOK)
		var got map[string]string
		r.decode(t, &got)
		require.Equal(t, map[string]string{
			"title": "News", "content": "Something happened.", "category": want,
			"created_at": clock.Now().Format(time.RFC3339Nano),
		}, got)
		clock.Advance(4 * time.Hour)
	}
	list := s.Announcements()
	require.Len(t, list, 4)
	require.Equal(t, topgg.CategoryNewFeature, list[3].Category)
	require.Equal(t, t0.Add(12*time.Hour), list[3].CreatedAt)
}

func TestAnnouncementCooldown(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	post := func() response {
		return v1(t, s, http.MethodPost, "/projects/@me/announcements", announce("News", "Something happened."))
	}
	requireStatus(t, post(), http.StatusOK)

	clock.Advance(time.Hour)
	r := post()
	requireProblem(t, r, http.StatusTooManyRequests)
	require.Equal(t, "10800", r.Header.Get("Retry-After"))
	var body struct {
		RetryAfter int `json:"retry-after"`
	}
	r.decode(t, &body)
	require.Equal(t, 10800, body.RetryAfter)

	// A refused request is validated first and starts nothing.
	requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/announcements", announce("x", "y")), 422)

	clock.Advance(3*time.Hour - 1500*time.Millisecond)
	r = post()
	requireProblem(t, r, http.StatusTooManyRequests)
	require.Equal(t, "2", r.Header.Get("Retry-After"), "1.5 s rounds up")

	clock.Advance(1500 * time.Millisecond) // exactly 4 h after the first
	requireStatus(t, post(), http.StatusOK)
	requireProblem(t, post(), http.StatusTooManyRequests)
	require.Len(t, s.Announcements(), 2)
}
