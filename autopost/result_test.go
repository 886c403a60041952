package autopost_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
)

// TestOnPostPanicIsRecovered: a panic in OnPost is logged and the Poster
// goes on posting.
func TestOnPostPanicIsRecovered(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	f := newFixture(t, setup{perShard: 2, cfg: autopost.Config{
		Logger: newTextLogger(&buf),
		OnPost: func(autopost.Result) { panic("boom in OnPost") },
	}})
	f.waitPosted(2)
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(30, 0)))
	f.waitPosted(3)
	assert.Contains(t, buf.String(), `level=ERROR msg="OnPost panicked" component=autopost panic="boom in OnPost"`)
}
