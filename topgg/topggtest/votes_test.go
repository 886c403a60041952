package topggtest

import (
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type votesPage struct {
	Cursor *string `json:"cursor"`
	Data   []struct {
		UserID     string `json:"user_id"`
		PlatformID string `json:"platform_id"`
		Weight     int    `json:"weight"`
		CreatedAt  string `json:"created_at"`
		ExpiresAt  string `json:"expires_at"`
	} `json:"data"`
}

func getVotes(t *testing.T, s *Server, q url.Values) votesPage {
	t.Helper()
	r := v1(t, s, http.MethodGet, "/projects/@me/votes?"+q.Encode(), nil)
	requireStatus(t, r, http.StatusOK)
	var p votesPage
	r.decode(t, &p)
	require.NotNil(t, p.Cursor, "cursor is always present")
	require.NotNil(t, p.Data, "data is an array, never null")
	return p
}

func since(t time.Time) url.Values {
	return url.Values{"startDate": {t.Format(time.RFC3339Nano)}}
}

func cursor(c string) url.Values { return url.Values{"cursor": {c}} }

func TestVotePagingFollowsCursor(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	for i := range 250 {
		s.AddVote(Vote{UserID: strconv.Itoa(i), PlatformID: "p" + strconv.Itoa(i), CreatedAt: t0.Add(-time.Duration(250-i) * time.Minute)})
	}

	p := getVotes(t, s, since(t0.Add(-24*time.Hour)))
	var seen []string
	sizes := []int{}
	for len(p.Data) > 0 {
		require.Less(t, len(sizes), 4, "the cursor does not advance")
		sizes = append(sizes, len(p.Data))
		for _, v := range p.Data {
			seen = append(seen, v.UserID)
		}
		p = getVotes(t, s, cursor(*p.Cursor))
	}
	require.Equal(t, []int{100, 100, 50}, sizes)
	require.Len(t, seen, 250)
	for i, id := range seen {
		require.Equal(t, strconv.Itoa(i), id, "oldest first across pages")
	}
	last := *p.Cursor
	require.NotEmpty(t, last)

	// An empty page repeats the same position.
	again := getVotes(t, s, cursor(last))
	require.Empty(t, again.Data)

	// Votes added after the end come with the last cursor.
	clock.Advance(time.Minute)
	s.AddVote(Vote{UserID: "late-1"})
	s.AddVote(Vote{UserID: "late-2"}) // same created_at: insertion order breaks the tie
	p = getVotes(t, s, cursor(*again.Cursor))
	require.Len(t, p.Data, 2)
	require.Equal(t, "late-1", p.Data[0].UserID)
	require.Equal(t, "late-2", p.Data[1].UserID)
	require.Empty(t, getVotes(t, s, cursor(*p.Cursor)).Data)
}

func TestVotePageSizeAndRecordShape(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithPageSize(2))
	created := time.Date(2026, 1, 17, 23, 36, 6, 347320000, time.UTC)
	s.AddVote(
		Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 2, CreatedAt: created},
		Vote{UserID: "b", CreatedAt: created.Add(time.Second)},
		Vote{UserID: "c", CreatedAt: created.Add(2 * time.Second)},
	)
	r := v1(t, s, http.MethodGet, "/projects/@me/votes?startDate=2026-01-17T00:00:00Z", nil)
	requireStatus(t, r, http.StatusOK)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	var raw map[string]any
	r.decode(t, &raw)
	data := raw["data"].([]any)
	require.Len(t, data, 2)
	require.Equal(t, map[string]any{
		"user_id": "800506814562787328", "platform_id": "146183080879613966", "weight": float64(2),
		"created_at": "2026-01-17T23:36:06.34732Z", "expires_at": "2026-01-18T11:36:06.34732Z",
	}, data[0])
	require.Equal(t, float64(1), data[1].(map[string]any)["weight"], "default weight")
}

func TestVoteStartDate(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(Vote{UserID: "old", CreatedAt: t0.Add(-2 * time.Hour)}, Vote{UserID: "at", CreatedAt: t0.Add(-time.Hour)}, Vote{UserID: "new"})

	p := getVotes(t, s, since(t0.Add(-time.Hour)))
	require.Len(t, p.Data, 2, "startDate is inclusive")
	require.Equal(t, "at", p.Data[0].UserID)

	yearAgo := t0.AddDate(-1, 0, 0)
	require.Len(t, getVotes(t, s, since(yearAgo.Add(time.Minute))).Data, 3)
	require.Len(t, getVotes(t, s, since(yearAgo)).Data, 3, "exactly one year back is allowed")
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?"+since(yearAgo.Add(-time.Minute)).Encode(), nil), http.StatusUnprocessableEntity)

	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes", nil), http.StatusBadRequest)
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?cursor=", nil), http.StatusBadRequest)
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?startDate=17.01.2026", nil), http.StatusBadRequest)
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?startDate=1700000000", nil), http.StatusBadRequest)

	// +00:00 offsets and 7 fractional digits parse like Z.
	p = getVotes(t, s, url.Values{"startDate": {"2026-01-17T22:36:06.3473200+00:00"}})
	require.Len(t, p.Data, 2)
}

func TestVoteCursorTakesPrecedence(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithPageSize(1))
	s.AddVote(Vote{UserID: "a", CreatedAt: t0.Add(-2 * time.Minute)}, Vote{UserID: "b", CreatedAt: t0.Add(-time.Minute)})
	p := getVotes(t, s, since(t0.Add(-time.Hour)))
	require.Equal(t, "a", p.Data[0].UserID)
	q := cursor(*p.Cursor)
	q.Set("startDate", "not a date")
	p = getVotes(t, s, q)
	require.Equal(t, "b", p.Data[0].UserID)
}

func TestExpireCursors(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithPageSize(1))
	s.AddVote(Vote{UserID: "a", CreatedAt: t0.Add(-2 * time.Minute)}, Vote{UserID: "b", CreatedAt: t0.Add(-time.Minute)})
	old := *getVotes(t, s, since(t0.Add(-time.Hour))).Cursor

	s.ExpireCursors()
	detail := requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?"+cursor(old).Encode(), nil), http.StatusBadRequest)
	require.Contains(t, detail, "cursor is invalid")

	// The fallback works and its cursors are good.
	p := getVotes(t, s, since(t0.Add(-90*time.Second)))
	require.Equal(t, "b", p.Data[0].UserID)
	require.Empty(t, getVotes(t, s, cursor(*p.Cursor)).Data)

	for _, bad := range []string{"garbage", "dGcxOjA6MTox", "!!!", "dGcxOjA6MToxOng"} {
		requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?"+cursor(bad).Encode(), nil), http.StatusBadRequest)
	}
}

func TestAddVoteConcurrentWithPaging(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithPageSize(7))
	const n = 200
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			s.AddVote(Vote{UserID: strconv.Itoa(i), CreatedAt: t0.Add(time.Duration(i) * time.Millisecond)})
		}
	})
	seen := map[string]bool{}
	p := getVotes(t, s, since(t0))
	for range 10 * n {
		for _, v := range p.Data {
			require.False(t, seen[v.UserID], "vote %s served twice", v.UserID)
			seen[v.UserID] = true
		}
		if len(p.Data) == 0 && len(seen) == n {
			break
		}
		p = getVotes(t, s, cursor(*p.Cursor))
	}
	wg.Wait()
	require.Len(t, seen, n, "every vote served once")
	require.Len(t, s.Votes(), n)
}

func TestVoteStatus(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(
		Vote{UserID: "u1", PlatformID: "d1", CreatedAt: t0.Add(-20 * time.Hour)},
		Vote{UserID: "u1", PlatformID: "d1", Weight: 2, CreatedAt: t0.Add(-time.Hour)},
		Vote{UserID: "u2", PlatformID: "d2", CreatedAt: t0.Add(-13 * time.Hour)},
	)
	type status struct {
		CreatedAt string `json:"created_at"`
		ExpiresAt string `json:"expires_at"`
		Weight    int    `json:"weight"`
	}
	want := status{
		CreatedAt: t0.Add(-time.Hour).Format(time.RFC3339Nano),
		ExpiresAt: t0.Add(11 * time.Hour).Format(time.RFC3339Nano),
		Weight:    2,
	}
	for _, path := range []string{"/projects/@me/votes/u1", "/projects/@me/votes/u1?source=topgg", "/projects/@me/votes/d1?source=discord"} {
		r := v1(t, s, http.MethodGet, path, nil)
		requireStatus(t, r, http.StatusOK)
		var got status
		r.decode(t, &got)
		require.Equal(t, want, got, path)
	}
	for _, path := range []string{"/projects/@me/votes/d1", "/projects/@me/votes/u1?source=discord", "/projects/@me/votes/u2", "/projects/@me/votes/nobody"} {
		requireProblem(t, v1(t, s, http.MethodGet, path, nil), http.StatusNotFound)
	}
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes/u1?source=native", nil), http.StatusBadRequest)

	// Expiry is exclusive: at expires_at the vote is no longer active.
	clock.Advance(11*time.Hour - time.Nanosecond)
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me/votes/u1", nil), http.StatusOK)
	clock.Advance(time.Nanosecond)
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes/u1", nil), http.StatusNotFound)
}

func TestAddVoteDefaults(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(Vote{UserID: "a"})
	s.AddVote(Vote{UserID: "b", CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Hour), Weight: 2})
	require.Equal(t, []Vote{
		{UserID: "b", Weight: 2, CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Hour)},
		{UserID: "a", Weight: 1, CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour)},
	}, s.Votes())
}

// TestVoteStartDateISOForms: startDate is ISO 8601, in the forms the official
// SDKs send: topggpy 2.0 get_votes(since) sends since.isoformat() (a naive
// datetime.now() has no offset and no fraction on a whole second), Node 4.0
// getVotes(since) sends toISOString() (3 digits, percent-encoded), Top.gg
// writes 7 digits, Go 9; a date alone is midnight UTC. The record keeps the
// value as sent.
func TestVoteStartDateISOForms(t *testing.T) {
	t.Parallel()
	clock := newClock() // 2026-01-17T23:36:06.34732Z
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(Vote{UserID: "before", CreatedAt: t0.Add(-time.Hour - time.Microsecond)}, Vote{UserID: "at", CreatedAt: t0.Add(-time.Hour)})
	s.AddVote(Vote{UserID: "day before", CreatedAt: time.Date(2026, 1, 16, 23, 59, 59, 0, time.UTC)})

	for _, tc := range []struct{ name, rawQuery, first string }{
		{"python naive", "startDate=2026-01-17T22:36:06.347320", "at"},
		{"python naive, whole second", "startDate=2026-01-17T22:36:06", "before"},
		{"python aware", "startDate=2026-01-17T22%3A36%3A06.347320%2B00%3A00", "at"},
		{"python aware, other zone", "startDate=2026-01-17T23%3A36%3A06.347320%2B01%3A00", "at"},
		{"node toISOString", "startDate=2026-01-17T22%3A36%3A06.347Z", "before"},
		{"top.gg 7 digits", "startDate=2026-01-17T22:36:06.3473200%2B00:00", "at"},
		{"go 9 digits", "startDate=2026-01-17T22:36:06.347320000Z", "at"},
		{"offset without colon", "startDate=2026-01-17T22:36:06.34732%2B0000", "at"},
		{"date alone", "startDate=2026-01-17", "before"},
		{"date alone, day before", "startDate=2026-01-16", "day before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := v1(t, s, http.MethodGet, "/projects/@me/votes?"+tc.rawQuery, nil)
			requireStatus(t, r, http.StatusOK)
			var p votesPage
			r.decode(t, &p)
			require.NotEmpty(t, p.Data)
			require.Equal(t, tc.first, p.Data[0].UserID)
			reqs := s.Requests()
			want, err := url.ParseQuery(tc.rawQuery)
			require.NoError(t, err)
			require.Equal(t, want, reqs[len(reqs)-1].Query, "recorded as sent")
		})
	}
	for _, bad := range []string{"yesterday", "1700000000", "2026-01-17T25:00:00Z", "2026-01-17T22:36", "17/01/2026"} {
		requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?"+url.Values{"startDate": {bad}}.Encode(), nil), http.StatusBadRequest)
	}
}
