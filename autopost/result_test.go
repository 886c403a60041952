package autopost_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
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
	assert.Equal(t, 1, strings.Count(buf.String(), "[running]"), "the stack, once")
}

// TestRefusedTokenLoggedOncePerSpell: while Top.gg refuses the token, each
// attempt is reported to OnPost but only the first is logged above debug
// level; a success ends the spell, and the next refusal is logged again.
func TestRefusedTokenLoggedOncePerSpell(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	// The fault is in place before the Poster runs: injected after, the
	// first post could pass before it (failed 2 in 40 runs).
	f := newFixture(t, setup{perShard: 2, clock: newClock(), cfg: autopost.Config{Logger: newTextLogger(&buf)},
		faults: []topggtest.Fault{{Method: "PATCH", Path: metricsPath, Status: http.StatusUnauthorized, Times: 3}}})
	failedN := func() int {
		n := 0
		for _, r := range f.resultsCopy() {
			if r.Outcome == autopost.OutcomeFailed {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return failedN() == 1 }, 5*time.Second, time.Millisecond)
	for i := 2; i <= 3; i++ {
		f.tick(f.interval)
		require.Eventually(t, func() bool { return failedN() == i }, 5*time.Second, time.Millisecond)
	}
	warn := `level=WARN msg="could not post the server count to Top.gg; will retry"`
	assert.Equal(t, 1, strings.Count(buf.String(), warn), buf.String())
	assert.Equal(t, 2, strings.Count(buf.String(), "the token is still refused"), buf.String())
	for _, r := range f.resultsCopy() {
		if r.Err != nil {
			assert.ErrorIs(t, r.Err, topgg.ErrUnauthorized)
		}
	}

	f.tick(f.interval)
	f.waitPosted(2)
	require.NoError(t, f.tg.Inject(topggtest.Fault{Method: "PATCH", Path: metricsPath, Status: http.StatusUnauthorized}))
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(30, 0))) // a change, so that the next attempt posts
	require.Eventually(t, func() bool { return f.counts().Servers == 3 }, 5*time.Second, time.Millisecond)
	f.tick(f.interval)
	require.Eventually(t, func() bool { return failedN() == 4 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 2, strings.Count(buf.String(), warn), buf.String())
}

// TestOutcomeLabels: each outcome's metrics label.
func TestOutcomeLabels(t *testing.T) {
	t.Parallel()
	for o, label := range map[autopost.Outcome]string{
		autopost.OutcomePosted: "posted", autopost.OutcomeUnchanged: "unchanged",
		autopost.OutcomeIncomplete: "incomplete", autopost.OutcomeFailed: "failed", 0: "unknown",
	} {
		assert.Equal(t, label, o.String())
	}
}
