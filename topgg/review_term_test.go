package topgg_test

// Findings of the hostile review (review-attack): each test failed on the
// code it names before its fix.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/term"
	"github.com/dblkit/go-topgg/topgg"
)

// TestRedirectOfAnEndedTermIsNotFollowed: the term is checked before the
// client hands a request to net/http, but net/http follows a redirect
// (307/308 repeat a POST with its body) by itself: a leader whose term ends
// while the redirect is in flight (a pause after the 307 arrived) still
// sends the redirected request. safeRedirects should check the request's
// term too.
func TestRedirectOfAnEndedTermIsNotFollowed(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewFake(start)
	tm := term.New(clk, start.Add(time.Second), nil)
	var followed atomic.Int32
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/old/") {
			clk.Advance(time.Hour) // the leader pauses past its term while the 307 travels
			http.Redirect(w, r, "/new/"+strings.TrimPrefix(r.URL.Path, "/old/"), http.StatusTemporaryRedirect)
			return
		}
		followed.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(ts.Close)
	c, err := topgg.New("token", topgg.WithBaseURL(ts.URL+"/old"), topgg.WithHTTPClient(ts.Client()), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	err = c.UpdateMetrics(term.With(context.Background(), tm), topgg.BotMetrics{ServerCount: new(1)})
	assert.ErrorIs(t, err, term.ErrOver)
	assert.Zero(t, followed.Load(), "the redirected request went out after the term's deadline")
}
