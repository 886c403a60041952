package topgg_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// addVotes adds n votes, a minute apart, the first at start, and returns them as
// the client should decode them.
func addVotes(srv *topggtest.Server, start time.Time, n int) []topgg.Vote {
	want := make([]topgg.Vote, n)
	for i := range n {
		v := topggtest.Vote{
			UserID:     fmt.Sprintf("8005068145627873%02d", i%100),
			PlatformID: fmt.Sprint(146183080879613966 + i),
			Weight:     1 + i%2,
			CreatedAt:  start.Add(time.Duration(i) * time.Minute),
		}
		v.ExpiresAt = v.CreatedAt.Add(12 * time.Hour)
		srv.AddVote(v)
		want[i] = v
	}
	return want
}

func requireVotes(t *testing.T, want, got []topgg.Vote) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].UserID, got[i].UserID, i)
		require.Equal(t, want[i].PlatformID, got[i].PlatformID, i)
		require.Equal(t, want[i].Weight, got[i].Weight, i)
		require.True(t, want[i].CreatedAt.Equal(got[i].CreatedAt), "%d: %s != %s", i, want[i].CreatedAt, got[i].CreatedAt)
		require.True(t, want[i].ExpiresAt.Equal(got[i].ExpiresAt), i)
	}
}

func TestVotesPages(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	start := ago(48 * time.Hour)
	want := addVotes(srv, start.Add(time.Second), 150)

	p1, err := c.Votes(t.Context(), topgg.VotesQuery{StartDate: start})
	require.NoError(t, err)
	requireVotes(t, want[:100], p1.Votes)
	require.NotEmpty(t, p1.Cursor)

	// The cursor takes precedence over StartDate.
	p2, err := c.Votes(t.Context(), topgg.VotesQuery{Cursor: p1.Cursor, StartDate: start.AddDate(-5, 0, 0)})
	require.NoError(t, err)
	requireVotes(t, want[100:], p2.Votes)

	p3, err := c.Votes(t.Context(), topgg.VotesQuery{Cursor: p2.Cursor})
	require.NoError(t, err)
	require.Empty(t, p3.Votes)

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		requireV1(t, srv, r, "GET", "/v1/projects/@me/votes")
		require.Empty(t, r.Body)
	}
	require.Equal(t, []string{start.Format(sentTime)}, reqs[0].Query["startDate"])
	require.NotContains(t, reqs[0].Query, "cursor")
	require.Equal(t, []string{p1.Cursor}, reqs[1].Query["cursor"])
	require.NotContains(t, reqs[1].Query, "startDate")
	require.Equal(t, []string{p2.Cursor}, reqs[2].Query["cursor"])
}

func TestVotesStartDateInOtherZone(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	start := ago(time.Hour)
	want := addVotes(srv, start, 2)

	p, err := c.Votes(t.Context(), topgg.VotesQuery{StartDate: start.In(time.FixedZone("EST", -5*3600))})
	require.NoError(t, err)
	requireVotes(t, want, p.Votes)
	require.Equal(t, start.UTC().Format(sentTime), onlyRequest(t, srv).Query.Get("startDate"))
}

// TestVotesStartDateAtMostSevenDigits: a startDate with nanoseconds goes out
// with 7 fractional digits, cut (never rounded up past a vote at the start).
func TestVotesStartDateAtMostSevenDigits(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	start := ago(time.Hour).Truncate(time.Second).Add(987654321)
	want := addVotes(srv, start, 1)

	p, err := c.Votes(t.Context(), topgg.VotesQuery{StartDate: start})
	require.NoError(t, err)
	requireVotes(t, want, p.Votes)
	got := onlyRequest(t, srv).Query.Get("startDate")
	require.Equal(t, start.Truncate(100).Format("2006-01-02T15:04:05.0000000Z"), got)
	require.Regexp(t, sentTimeRE, got)
}

func TestAllVotes(t *testing.T) {
	t.Parallel()
	srv := newServer(t, topggtest.WithPageSize(10))
	c := newClient(t, srv)
	start := ago(24 * time.Hour)
	want := addVotes(srv, start, 35)

	requireVotes(t, want, allVotes(t, c, start, 0))
	// 10+10+10+5, then the empty page that ends the history.
	reqs := srv.Requests()
	require.Len(t, reqs, 5)
	require.NotEmpty(t, reqs[0].Query.Get("startDate"))
	for _, r := range reqs[1:] {
		require.NotEmpty(t, r.Query.Get("cursor"))
		require.Empty(t, r.Query.Get("startDate"))
	}
}

func TestAllVotesEarlyBreak(t *testing.T) {
	t.Parallel()
	srv := newServer(t, topggtest.WithPageSize(10))
	c := newClient(t, srv)
	start := ago(24 * time.Hour)
	want := addVotes(srv, start, 35)

	requireVotes(t, want[:15], allVotes(t, c, start, 15))
	require.Len(t, srv.Requests(), 2, "breaking out of the loop must send no further request")
}

func TestAllVotesEmptyHistory(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.Empty(t, allVotes(t, c, ago(time.Hour), 0))
	require.Len(t, srv.Requests(), 1)
}

// allVotes reads c.AllVotes from start, up to stop votes (0: all), and
// requires that no error comes.
func allVotes(t *testing.T, c *topgg.Client, start time.Time, stop int) []topgg.Vote {
	t.Helper()
	var got []topgg.Vote
	for v, err := range c.AllVotes(t.Context(), start) {
		require.NoError(t, err)
		got = append(got, v)
		if len(got) == stop {
			break
		}
	}
	return got
}

func TestAllVotesYieldsErrorLast(t *testing.T) {
	t.Parallel()
	srv := newServer(t, topggtest.WithPageSize(10))
	c := newClient(t, srv, topgg.WithRetryPolicy(topgg.NoRetries()))
	start := ago(24 * time.Hour)
	addVotes(srv, start, 25)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 500, Times: 3}))

	var votes, errs int
	for v, err := range c.AllVotes(t.Context(), start) {
		if err != nil {
			errs++
			var apiErr *topgg.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, 500, apiErr.StatusCode)
			require.Zero(t, v)
			continue
		}
		votes++
	}
	require.Equal(t, 1, errs)
	require.Zero(t, votes, "the fault hits the first page")
	require.Len(t, srv.Requests(), 1)
}

func TestAllVotesErrorAfterVotes(t *testing.T) {
	t.Parallel()
	srv := newServer(t, topggtest.WithPageSize(10))
	c := newClient(t, srv, topgg.WithRetryPolicy(topgg.NoRetries()))
	start := ago(24 * time.Hour)
	want := addVotes(srv, start, 25)

	var got []topgg.Vote
	var last error
	n := 0
	for v, err := range c.AllVotes(t.Context(), start) {
		n++
		if err != nil {
			last = err
			continue
		}
		got = append(got, v)
		if len(got) == 10 { // the second page will fail
			require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 500}))
		}
	}
	requireVotes(t, want[:10], got)
	require.Equal(t, 11, n, "ten votes, then the failure once, as the last element")
	var apiErr *topgg.APIError
	require.ErrorAs(t, last, &apiErr)
	require.Len(t, srv.Requests(), 2)
}

func TestVoteStatus(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	created := ago(time.Hour)
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 2, CreatedAt: created})

	for _, tc := range []struct {
		user   string
		source topgg.UserIDKind
		query  []string // nil: no source parameter
	}{
		{"800506814562787328", "", nil},
		{"800506814562787328", topgg.UserIDTopgg, []string{"topgg"}},
		{"146183080879613966", topgg.UserIDDiscord, []string{"discord"}},
	} {
		n := len(srv.Requests())
		st, err := c.VoteStatus(t.Context(), tc.user, tc.source)
		require.NoError(t, err)
		require.NotNil(t, st)
		require.Equal(t, 2, st.Weight)
		if tc.source == topgg.UserIDDiscord {
			require.Equal(t, tc.user, st.PlatformID)
		} else {
			require.Equal(t, tc.user, st.UserID)
		}
		require.True(t, created.Equal(st.CreatedAt), "%s != %s", created, st.CreatedAt)
		require.True(t, created.Add(12*time.Hour).Equal(st.ExpiresAt))

		reqs := srv.Requests()
		require.Len(t, reqs, n+1)
		r := reqs[n]
		requireV1(t, srv, r, "GET", "/v1/projects/@me/votes/"+tc.user)
		require.Equal(t, tc.query, r.Query["source"])
		require.Empty(t, r.Body)
	}
}

func TestVoteStatusNoVote(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	// A Top.gg id looked up as a Discord id, an expired vote, and an unknown user.
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966"})
	srv.AddVote(topggtest.Vote{UserID: "900000000000000001", CreatedAt: ago(13 * time.Hour)})

	for _, tc := range []struct {
		user   string
		source topgg.UserIDKind
	}{
		{"800506814562787328", topgg.UserIDDiscord},
		{"900000000000000001", topgg.UserIDTopgg},
		{"123456789012345678", ""},
	} {
		st, err := c.VoteStatus(t.Context(), tc.user, tc.source)
		require.NoError(t, err, "no active vote is a normal answer")
		require.Nil(t, st)
	}
	require.Len(t, srv.Requests(), 3, "a 404 is not retried")
}

func TestAllVotesOddCursors(t *testing.T) {
	t.Parallel()
	vote := `{"user_id":"1","platform_id":"2","weight":1,"created_at":"2026-01-17T23:36:06Z","expires_at":"2026-01-18T11:36:06Z"}`

	t.Run("no cursor ends", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c := newClient(t, srv)
		require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 200, Body: `{"data":[` + vote + `]}`}))
		n := 0
		for _, err := range c.AllVotes(t.Context(), ago(time.Hour)) {
			require.NoError(t, err)
			n++
		}
		require.Equal(t, 1, n)
		require.Len(t, srv.Requests(), 1, "nothing to follow")
	})
	t.Run("stuck cursor fails", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c := newClient(t, srv)
		require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 200, Times: 10, Body: `{"cursor":"same","data":[` + vote + `]}`}))
		var errs []error
		n := 0
		for _, err := range c.AllVotes(t.Context(), ago(time.Hour)) {
			n++
			if err != nil {
				errs = append(errs, err)
			}
		}
		require.Len(t, errs, 1)
		require.Contains(t, errs[0].Error(), "cursor did not advance")
		require.Equal(t, 3, n, "two votes, then the error")
		require.Len(t, srv.Requests(), 2)
	})
}

// TestVoteStatus404NeedsTheServicesAnswer: only a 404 that the service itself
// answered (a JSON body) means "no active vote". Any other 404, such as a web
// server's page for a base URL that misses /api, is an error, not a silent "no vote".
func TestVoteStatus404NeedsTheServicesAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, contentType, body string
		noVote                  bool
	}{
		{"problem+json", "application/problem+json", `{"type":"about:blank","title":"Not Found","status":404}`, true},
		{"json with parameters", "application/json; charset=utf-8", `{"error":"Not found"}`, true},
		{"JSON object under another type", "text/plain", ` {"detail":"no vote"}`, true},
		{"html page", "text/html; charset=utf-8", "<!doctype html><html><body><h1>404 Not Found</h1></body></html>", false},
		{"plain text", "text/plain; charset=utf-8", "404 page not found\n", false},
		{"JSON that is not an object", "text/plain", `"not found"`, false},
		{"empty", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				} else {
					w.Header()["Content-Type"] = nil // no sniffing
				}
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(ts.Close)
			// The base URL misses /api, as a misconfigured one would.
			c, err := topgg.New("token", topgg.WithBaseURL(ts.URL), topgg.WithRetryPolicy(fastRetries()))
			require.NoError(t, err)

			st, err := c.VoteStatus(t.Context(), "800506814562787328", "")
			if tc.noVote {
				require.NoError(t, err)
				require.Nil(t, st)
				return
			}
			require.ErrorIs(t, err, topgg.ErrNotFound)
			var apiErr *topgg.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, http.StatusNotFound, apiErr.StatusCode)
			require.Equal(t, tc.body, string(apiErr.Body))
			require.Nil(t, st)
		})
	}
}

// votePage is a vote list page with one vote per user id given.
func votePage(cursor string, users ...int) string {
	data := ""
	for i, u := range users {
		if i > 0 {
			data += ","
		}
		data += fmt.Sprintf(`{"user_id":"%d","platform_id":"2","weight":1,"created_at":"2026-01-17T23:36:%02dZ","expires_at":"2026-01-18T11:36:06Z"}`, u, u%60)
	}
	return `{"cursor":"` + cursor + `","data":[` + data + `]}`
}

// walk runs AllVotes to its end and returns the votes and errors it yielded.
func walk(t *testing.T, c *topgg.Client) (votes int, errs []error) {
	t.Helper()
	for _, err := range c.AllVotes(t.Context(), ago(time.Hour)) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		votes++
	}
	return votes, errs
}

// TestAllVotesEndsWhenPagesDoNotProgress: every way the service's cursors can keep
// the walk going ends it with ErrPagination after the first page that shows
// it, and no further request.
func TestAllVotesEndsWhenPagesDoNotProgress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		pages   []topggtest.Fault
		votes   int
		problem string
	}{
		{"same votes under a new cursor each time", []topggtest.Fault{
			{Times: 50, Body: votePage("c"+"{{hit}}", 1)},
		}, 2, "repeats the votes of an earlier page"},
		{"cursors in a cycle", []topggtest.Fault{
			{Body: votePage("a", 1)}, {Body: votePage("b", 2)}, {Body: votePage("c", 3)}, {Body: votePage("a", 4)}, {Times: 50, Body: votePage("b", 5)},
		}, 4, "cursor came back after other pages"},
		{"cursor that does not advance", []topggtest.Fault{
			{Body: votePage("a", 1)}, {Times: 50, Body: votePage("a", 2)},
		}, 2, "cursor did not advance"},
		{"two pages in turn under fresh cursors", []topggtest.Fault{
			{Body: votePage("a", 1, 2)}, {Body: votePage("b", 3)}, {Times: 50, Body: votePage("c"+"{{hit}}", 1, 2)},
		}, 5, "repeats the votes of an earlier page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := newClient(t, srv)
			for _, f := range tc.pages {
				f.Path, f.Status = "/v1/projects/@me/votes", 200
				require.NoError(t, srv.Inject(f))
			}
			votes, errs := walk(t, c)
			require.Len(t, errs, 1)
			require.ErrorIs(t, errs[0], topgg.ErrPagination)
			require.Contains(t, errs[0].Error(), "GET /v1/projects/@me/votes: page ")
			require.Contains(t, errs[0].Error(), tc.problem)
			require.False(t, topgg.Retryable(errs[0]))
			require.Equal(t, tc.votes, votes, "the offending page's votes come before the error")
			require.Contains(t, errs[0].Error(), fmt.Sprintf(": page %d: ", len(srv.Requests())), "not one request after the page that showed it")
		})
	}
}

// TestAllVotesEqualVotesOnDistinctPagesAreFine: pages that share some votes (a
// boundary) but are not the same page do not stop the walk.
func TestAllVotesEqualVotesOnDistinctPagesAreFine(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	for _, body := range []string{votePage("a", 1, 2), votePage("b", 2, 3), votePage("c", 3), `{"cursor":"d","data":[]}`} {
		require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 200, Body: body}))
	}
	votes, errs := walk(t, c)
	require.Empty(t, errs)
	require.Equal(t, 5, votes)
	require.Len(t, srv.Requests(), 4)
}
