package shards_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dblkit/go-topgg/shards"
)

// TestZeroGroupPanics: a Group not made by New is invalid (DESIGN's
// zero-value policy): Open panics instead of opening nothing and returning nil.
func TestZeroGroupPanics(t *testing.T) {
	t.Parallel()
	for name, g := range map[string]*shards.Group{"zero": {}, "nil": nil} {
		assert.Panics(t, func() { _ = g.Open(context.Background()) }, name)
	}
}
