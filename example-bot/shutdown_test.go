package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestShutdownBounds: a reward handler that honours its context is cancelled
// early enough for the shards to close within the budget, and the budget
// leaves the process time to exit within the 10 s SIGTERM allows.
func TestShutdownBounds(t *testing.T) {
	t.Parallel()
	const discordgoClose = time.Second // discordgo's Close sleeps a second
	assert.Less(t, pluginCloseTimeout, jobsFirst)
	assert.LessOrEqual(t, jobsFirst+discordgoClose, shutdownBudget-time.Second, "no margin for the shards")
	assert.LessOrEqual(t, shutdownBudget, 9*time.Second)
}
