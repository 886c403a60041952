// Package testkit holds what the module's tests share: fake services wired
// for one test, jobs run until the test ends, and call counters. Tests only.
package testkit

import (
	"time"

	"go.uber.org/goleak"
)

// Wait bounds every wait of a test: generous for a loaded 2-core machine
// under -race, never reached when the code works. Tick is how often to look.
const (
	Wait = 15 * time.Second
	Tick = 5 * time.Millisecond
)

// Leaks are the goleak options of a package whose tests run discordgo
// sessions: a session closed by its peer waits a bounded second for the
// close handshake in discordgo's own goroutine, which is not a leak.
func Leaks() []goleak.Option {
	return []goleak.Option{goleak.IgnoreAnyFunction("github.com/bwmarrin/discordgo.(*Session).CloseWithCode")}
}
