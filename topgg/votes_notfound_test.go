package topgg_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

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
				require.Equal(t, topgg.VoteStatus{}, st)
				return
			}
			require.ErrorIs(t, err, topgg.ErrNotFound)
			var apiErr *topgg.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, http.StatusNotFound, apiErr.StatusCode)
			require.Equal(t, tc.body, string(apiErr.Body))
			require.Equal(t, topgg.VoteStatus{}, st)
		})
	}
}
