package commands_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a Syncer
// starts none, and every discordgo session and fake server is closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
