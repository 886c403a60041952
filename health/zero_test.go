package health_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dblkit/go-topgg/health"
)

// A Probe not made by NewProbe fails (503), never passes: a zero readiness
// handler used to answer 200 "ok", and a nil one panicked.
func TestZeroOrNilProbeFails(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]*health.Probe{"zero": {}, "nil": nil} {
		assert.NotPanics(t, func() {
			code, body := get(t, p, "/readyz?verbose")
			assert.Equal(t, http.StatusServiceUnavailable, code, name)
			assert.Contains(t, body, "not made by health.NewProbe", name)
			names, errs, ok := health.Run(context.Background(), p)
			assert.False(t, ok, name)
			assert.Equal(t, []string{"probe"}, names, name)
			if assert.Len(t, errs, 1, name) {
				assert.ErrorIs(t, errs[0], health.ErrInvalidCheck, name)
			}
		}, name)
	}
}
