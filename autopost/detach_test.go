package autopost_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
)

// TestDetachAllPostsNothing: with every session detached there is nothing
// to count, so nothing is posted (not a server_count of 0); the attempts are
// reported as skipped. The numbers last posted stay the reference: a session
// attached again with the same guilds is not posted again, a change is.
func TestDetachAllPostsNothing(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	f := newFixture(t, setup{perShard: 2, cfg: autopost.Config{Logger: newTextLogger(&buf)}})
	f.waitPosted(2)
	f.detach[0]()
	from := len(f.resultsCopy())
	skippedSince := func(from int) []autopost.Result {
		var out []autopost.Result
		for _, r := range f.resultsCopy()[from:] {
			if r.Skipped {
				out = append(out, r)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(skippedSince(from)) >= 3 }, 5*time.Second, 5*time.Millisecond)
	for _, m := range f.patches() {
		assert.NotZero(t, m.Metrics["server_count"], "server_count 0 posted: %v", f.patches())
	}
	for _, r := range skippedSince(from) {
		assert.NoError(t, r.Err)
		assert.Zero(t, r.Servers)
	}
	assert.Contains(t, buf.String(), `msg="not every shard has reported; nothing posted" component=autopost missing=[0] shards=1`)

	// A new session for the same shard, with the same guilds: the numbers
	// are those of the last post, so they are not sent again.
	sess, err := f.dc.NewSession(0, 1)
	require.NoError(t, err)
	f.detach[0], err = f.poster.Attach(sess)
	require.NoError(t, err)
	f.sessions[0] = sess
	require.NoError(t, sess.Open())
	from = len(f.resultsCopy())
	require.Eventually(t, func() bool {
		for _, r := range skippedSince(from) {
			if r.Servers == 2 {
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "the unchanged numbers are skipped")
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(40, 0)))
	f.waitPosted(3)
	var posted []int
	for _, m := range f.patches() {
		posted = append(posted, m.Metrics["server_count"])
	}
	assert.Equal(t, []int{2, 3}, posted, "nothing posted while detached, 2 not posted again")
}

// TestDetachOneOfTwoPostsNothing: detaching one shard of two leaves the
// other's guilds only, a partial total, so nothing is posted (it used to
// post the partial total with a warning); the skipped attempts name the
// missing shard, and the total is posted again once it is back.
func TestDetachOneOfTwoPostsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{shards: 2, perShard: 2})
	f.waitPosted(4)
	f.detach[1]()
	f.detach[1]() // twice is harmless
	counts, err := autopost.CounterOf(f.poster).Counts(f.ctx())
	require.NoError(t, err)
	assert.Equal(t, []int{1}, counts.Missing)
	assert.Equal(t, []int{2, 0}, counts.PerShard)
	from := len(f.resultsCopy())
	require.Eventually(t, func() bool {
		n := 0
		for _, r := range f.resultsCopy()[from:] {
			if r.Skipped && slices.Equal(r.Missing, []int{1}) {
				n++
			}
		}
		return n >= 3
	}, 5*time.Second, 5*time.Millisecond)
	for _, m := range f.patches() {
		assert.Equal(t, 4, m.Metrics["server_count"], "a partial total was posted: %v", f.patches())
	}

	// Events of the detached session no longer count; a new session for
	// shard 1 brings its guilds back, and the exact total goes out.
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(60, 1)))
	sess, err := f.dc.NewSession(1, 2)
	require.NoError(t, err)
	f.detach[1], err = f.poster.Attach(sess) // while Run runs: fine before Open
	require.NoError(t, err)
	f.sessions[1] = sess
	require.NoError(t, sess.Open())
	f.waitPosted(5)
}
