package topgg_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

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
// the walk going ends it with a *PaginationError after the first page that shows
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
			var pe *topgg.PaginationError
			require.ErrorAs(t, errs[0], &pe)
			require.ErrorIs(t, errs[0], topgg.ErrPagination)
			require.Equal(t, "GET /v1/projects/@me/votes", pe.Op)
			require.Contains(t, pe.Problem, tc.problem)
			require.False(t, topgg.Retryable(errs[0]))
			require.Equal(t, tc.votes, votes, "the offending page's votes come before the error")
			require.Len(t, srv.Requests(), pe.Page, "not one request after the page that showed it")
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
