package autopost_test

import (
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
	assert.Contains(t, buf.String(), "no attached shard is ready; nothing posted")

	// A new session for the same shard, with the same guilds: the numbers
	// are those of the last post, so they are not sent again.
	sess, err := f.dc.NewSession(0, 1)
	require.NoError(t, err)
	f.detach[0] = f.poster.Attach(sess)
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

// TestDetachIdleLeavesNoReadyShard: detaching the only ready shard, while
// another attached shard never got its READY, posts nothing either.
func TestDetachIdleLeavesNoReadyShard(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{shards: 2, perShard: 2, open: []int{0}, idle: []int{1},
		cfg: autopost.Config{ReadyTimeout: 50 * time.Millisecond}})
	f.waitPosted(2)
	f.detach[0]()
	from := len(f.resultsCopy())
	require.Eventually(t, func() bool {
		n := 0
		for _, r := range f.resultsCopy()[from:] {
			if r.Skipped && r.Servers == 0 {
				n++
			}
		}
		return n >= 3
	}, 5*time.Second, 5*time.Millisecond)
	for _, m := range f.patches() {
		assert.NotZero(t, m.Metrics["server_count"], "server_count 0 posted: %v", f.patches())
	}
}
