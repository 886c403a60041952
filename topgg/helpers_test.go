package topgg_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestMain fails the run if a goroutine outlives the tests: the client starts none
// of its own, and its connections close with the servers they talk to.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fastRetries keeps retry tests quick while still retrying like the default.
func fastRetries() topgg.RetryPolicy {
	return topgg.RetryPolicy{MaxAttempts: 4, MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond, MaxRetryAfter: 5 * time.Second}
}

func newServer(t *testing.T, opts ...topggtest.Option) *topggtest.Server {
	t.Helper()
	srv, err := topggtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// newClient returns a client of srv's project with fast retries; opts come last
// and so override.
func newClient(t *testing.T, srv *topggtest.Server, opts ...topgg.Option) *topgg.Client {
	t.Helper()
	all := append([]topgg.Option{topgg.WithBaseURL(srv.URL), topgg.WithRetryPolicy(fastRetries())}, opts...)
	c, err := topgg.New(srv.Token(), all...)
	require.NoError(t, err)
	return c
}

// onlyRequest returns the single request srv received.
func onlyRequest(t *testing.T, srv *topggtest.Server) topggtest.Request {
	t.Helper()
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	return reqs[0]
}

// requireV1 checks the method, path and v1 auth form of a recorded request.
func requireV1(t *testing.T, srv *topggtest.Server, r topggtest.Request, method, path string) {
	t.Helper()
	require.Equal(t, method, r.Method)
	require.Equal(t, path, r.Path)
	require.Equal(t, "Bearer "+srv.Token(), r.Header.Get("Authorization"))
	require.Equal(t, "application/json", r.Header.Get("Accept"))
	require.NotEmpty(t, r.Header.Get("User-Agent"))
	requireContentType(t, r)
}

// requireV0 checks the method, path and bare-token auth of a recorded request.
func requireV0(t *testing.T, srv *topggtest.Server, r topggtest.Request, method, path string) {
	t.Helper()
	require.Equal(t, method, r.Method)
	require.Equal(t, path, r.Path)
	require.Equal(t, srv.Token(), r.Header.Get("Authorization"))
	requireContentType(t, r)
}

func requireContentType(t *testing.T, r topggtest.Request) {
	t.Helper()
	if len(r.Body) > 0 {
		require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	} else {
		require.Empty(t, r.Header.Get("Content-Type"))
	}
}

// requireInvalid asserts a *ValidationError naming field.
func requireInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var ve *topgg.ValidationError
	require.True(t, errors.As(err, &ve), "want *ValidationError for %s, got %v", field, err)
	require.Equal(t, field, ve.Field)
	require.NotEmpty(t, ve.Problem)
	require.NotEmpty(t, ve.Rule)
	require.Contains(t, ve.Error(), field)
}

// hours ago, rounded to the millisecond so that times survive the wire exactly.
func ago(d time.Duration) time.Time { return time.Now().Add(-d).UTC().Truncate(time.Millisecond) }

// sentTime is how the client writes a timestamp it sends (UTC, at most 7
// fractional digits); sentTimeRE matches it.
const sentTime = "2006-01-02T15:04:05.9999999Z"

var sentTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,7})?Z$`)

// logBuffer collects the log lines the code under test writes from its goroutines.
type logBuffer = testlog.Buffer

// runes returns s repeated to n characters.
func runes(s string, n int) string {
	return strings.Repeat(s, n)
}

// errorsAs is errors.As for use inside closures that return errors.
func errorsAs(err error, target any) bool { return errors.As(err, target) }
