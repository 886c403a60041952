package voterewards

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

// TestPendingReportsArriveInOrder: goroutines change the pending count at
// once; the observer hears every count in order (none stale, each one step
// from the one before), so its last count is the true one.
func TestPendingReportsArriveInOrder(t *testing.T) {
	t.Parallel()
	var got []int // appended under lmu
	p := &Poller{cfg: Config{Concurrency: 1, Observer: func(e Event) { got = append(got, e.Pending) }}}
	r := p.newRun(context.Background())
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			v := Vote{Vote: topgg.Vote{UserID: strconv.Itoa(i)}}
			assert.True(t, r.claim(false, v, false))
			r.settle(false, v, claimDone, time.Time{})
		})
	}
	wg.Wait()
	require.Len(t, got, 100)
	assert.Equal(t, 1, got[0])
	for i := 1; i < len(got); i++ {
		assert.Contains(t, []int{got[i-1] - 1, got[i-1] + 1}, got[i], "report %d", i)
	}
	assert.Equal(t, 0, got[99])
	assert.Equal(t, 0, r.pending)
}
