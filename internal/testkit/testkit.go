// Package testkit holds what the module's tests share: fake services wired
// for one test, jobs run until the test ends, and call counters. Tests only.
package testkit

import "time"

// Wait bounds every wait of a test: generous for a loaded 2-core machine
// under -race, never reached when the code works. Tick is how often to look.
const (
	Wait = 15 * time.Second
	Tick = 5 * time.Millisecond
)
