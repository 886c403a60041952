package health_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dblkit/go-topgg/health"
)

// A Handler not made by NewHandler fails its probe (503), never passes it:
// a zero readiness handler used to answer 200 "ok", and a nil one panicked.
func TestZeroOrNilHandlerFails(t *testing.T) {
	t.Parallel()
	for name, h := range map[string]*health.Handler{"zero": {}, "nil": nil} {
		assert.NotPanics(t, func() {
			code, body := get(t, h, "/readyz?verbose")
			assert.Equal(t, http.StatusServiceUnavailable, code, name)
			assert.Contains(t, body, "not made by health.NewHandler", name)
			results, ok := h.Run(context.Background())
			assert.False(t, ok, name)
			if assert.Len(t, results, 1, name) {
				assert.ErrorIs(t, results[0].Err, health.ErrInvalidCheck, name)
			}
		}, name)
	}
}
