package shards_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
)

// TestZeroAndNilGroupAreErrors: a Group not made by New fails every call
// with topgg.ErrNotConfigured instead of opening nothing and returning nil,
// or panicking on a nil channel or a zero shard count.
func TestZeroAndNilGroupAreErrors(t *testing.T) {
	t.Parallel()
	for name, g := range map[string]*shards.Group{"zero": {}, "nil": nil} {
		assert.ErrorIs(t, g.Open(context.Background()), topgg.ErrNotConfigured, name)
		assert.ErrorIs(t, g.Close(), topgg.ErrNotConfigured, name)
		_, err := g.ForGuild("264811613708746752")
		assert.ErrorIs(t, err, topgg.ErrNotConfigured, name)
		assert.Empty(t, g.Sessions(), name)
		assert.NotPanics(t, func() { _ = g.String() }, name)
	}
}
