package health_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/health"
)

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(body)
}

func TestProbe(t *testing.T) {
	t.Parallel()
	failing := errors.New("not yet:\nshard 2")
	var fail bool
	h, err := health.NewProbe("readyz",
		health.Check{Name: "shards", Func: func(context.Context) error {
			if fail {
				return failing
			}
			return nil
		}},
		health.Check{Name: "token", Func: func(context.Context) error { return nil }},
	)
	require.NoError(t, err)

	code, body := get(t, h, "/readyz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok\n", body)
	code, body = get(t, h, "/readyz?verbose")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "[+]shards ok\n[+]token ok\nok\n", body)

	fail = true
	code, body = get(t, h, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "[-]shards failed\nreadyz check failed\n", body)
	code, body = get(t, h, "/readyz?verbose=1")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "[-]shards failed: not yet: shard 2\n[+]token ok\nreadyz check failed\n", body)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/readyz", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}

func TestPanickingCheckFails(t *testing.T) {
	t.Parallel()
	h, err := health.NewProbe("livez", health.Check{Name: "jobs", Func: func(context.Context) error { panic("boom") }})
	require.NoError(t, err)
	code, body := get(t, h, "/livez?verbose")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "[-]jobs failed: panic: boom")
}

func TestNoChecksPasses(t *testing.T) {
	t.Parallel()
	h, err := health.NewProbe("livez")
	require.NoError(t, err)
	code, _ := get(t, h, "/livez")
	require.Equal(t, http.StatusOK, code)
}

func TestNewProbeRefusesBadChecks(t *testing.T) {
	t.Parallel()
	ok := func(context.Context) error { return nil }
	for _, checks := range [][]health.Check{
		{{Name: "", Func: ok}},
		{{Name: "Bad Name", Func: ok}},
		{{Name: "a"}},
		{{Name: "a", Func: ok}, {Name: "a", Func: ok}},
	} {
		_, err := health.NewProbe("readyz", checks...)
		require.ErrorIs(t, err, health.ErrInvalidCheck)
	}
	_, err := health.NewProbe("")
	require.ErrorIs(t, err, health.ErrInvalidCheck)
}

// TestProbePrintsByName: fmt of a Probe walked its checks' calls in flight
// unlocked; under every verb it prints its name alone.
func TestProbePrintsByName(t *testing.T) {
	t.Parallel()
	p, err := health.NewProbe("readyz", health.Check{Name: "db", Func: func(context.Context) error { return nil }})
	require.NoError(t, err)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		require.Equal(t, "health.Probe", fmt.Sprintf(verb, p), verb)
	}
}
