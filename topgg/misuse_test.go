package topgg_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

// TestNilOption: a nil Option is an error (ErrNilArgument), not a panic.
func TestNilOption(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("token", topgg.WithUserAgent("ua"), nil)
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	require.Contains(t, err.Error(), "option 1")
	require.Nil(t, c)
}
