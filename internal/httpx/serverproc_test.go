package httpx

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestWithinNamesWhatHangs: a wait that returns is waited for; one that hangs
// past the bound panics naming it, and is not waited for.
func TestWithinNamesWhatHangs(t *testing.T) {
	t.Parallel()
	ran := false
	Within("a quick wait", func() { ran = true })
	assert.True(t, ran)

	hung := make(chan struct{})
	defer close(hung)
	assert.PanicsWithValue(t, "still waiting after 10ms for the server's handlers", func() {
		within(10*time.Millisecond, "the server's handlers", func() { <-hung })
	})
}
