package health_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dblkit/go-topgg/health"
)

// A Probe not made by NewProbe is invalid (DESIGN's zero-value policy): it
// panics rather than answer 200 "ok" with no check.
func TestZeroOrNilProbePanics(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]*health.Probe{"zero": {}, "nil": nil} {
		assert.Panics(t, func() { health.Run(context.Background(), p) }, name)
	}
}
