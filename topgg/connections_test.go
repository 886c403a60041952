package topgg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestOneConnection: every answer, error replies included, is drained and closed,
// so 1,000 sequential calls share one keep-alive connection.
func TestOneConnection(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	// No retries: each call is one request, so the mix below is exact. The 429s
	// carry no Retry-After, so they leave no block that would make later calls
	// local (a local refusal would prove nothing about connections).
	c := newClient(t, srv, topgg.WithRetryPolicy(topgg.NoRetries()))
	const voter, stranger = "800506814562787328", "123456789012345678"
	srv.AddVote(topggtest.Vote{UserID: voter, PlatformID: "146183080879613966"})

	// 100 KiB: the error keeps 4 KiB, so the rest must be drained for the
	// connection to be reused.
	bigProblem := `{"title":"Internal Server Error","status":500,"detail":"` + strings.Repeat("x", 100<<10) + `"}`

	counts := map[int]int{}
	for i := range 1000 {
		switch i % 5 {
		case 0: // 200 with a body
			st, err := c.VoteStatus(t.Context(), voter, "")
			require.NoError(t, err)
			require.True(t, st.Voted)
			counts[200]++
		case 1: // 404: no vote
			st, err := c.VoteStatus(t.Context(), stranger, "")
			require.NoError(t, err)
			require.False(t, st.Voted)
			counts[404]++
		case 2: // 429 without Retry-After
			require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes/*", Status: 429, Body: `{"title":"Too Many Requests","status":429}`}))
			_, err := c.VoteStatus(t.Context(), voter, "")
			var rl *topgg.RateLimitError
			require.ErrorAs(t, err, &rl)
			require.False(t, rl.Local)
			counts[429]++
		case 3: // 500 with a problem body far larger than what the error keeps
			require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes/*", Status: 500, Body: bigProblem, ContentType: "application/problem+json"}))
			_, err := c.VoteStatus(t.Context(), voter, "")
			var apiErr *topgg.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, 500, apiErr.StatusCode)
			counts[500]++
		case 4: // 204 without a body
			require.NoError(t, c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(i)}))
			counts[204]++
		}
	}
	require.Equal(t, map[int]int{200: 200, 404: 200, 429: 200, 500: 200, 204: 200}, counts)
	require.Len(t, srv.Requests(), 1000)
	require.Equal(t, 1, srv.Accepts(), "one connection for every call")
}

// TestLargeErrorBodyKeepsConnection: an error body larger than what the error
// keeps is still drained, so the connection is reused.
func TestLargeErrorBodyKeepsConnection(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv, topgg.WithRetryPolicy(topgg.NoRetries()))
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = 'x'
	}
	for range 20 {
		require.NoError(t, srv.Inject(topggtest.Fault{Status: 500, Body: `{"detail":"` + string(big) + `"}`}))
		_, err := c.Project(t.Context())
		require.Error(t, err)
		_, err = c.Project(t.Context())
		require.NoError(t, err)
	}
	require.Equal(t, 1, srv.Accepts())
}

// TestConcurrentUse: the client is safe for concurrent use (run with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv, topgg.WithLegacyLimit(0, 0))
	srv.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	bot := srv.Project().PlatformID
	done := make(chan error, 64)
	for i := range cap(done) {
		go func() {
			var err error
			switch i % 4 {
			case 0:
				_, err = c.Project(t.Context())
			case 1:
				_, err = c.VoteStatus(t.Context(), "1", "")
			case 2:
				err = c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(i)})
			case 3:
				_, err = c.Legacy().HasVoted(t.Context(), bot, "2")
			}
			done <- err
		}()
	}
	for range cap(done) {
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("concurrent calls did not finish")
		}
	}
	// Connections opened by the burst are kept idle and reused afterwards.
	opened := srv.Accepts()
	for range 20 {
		_, err := c.Project(t.Context())
		require.NoError(t, err)
	}
	require.Equal(t, opened, srv.Accepts())
}
