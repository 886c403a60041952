// Package clock is the one time source of the module's jobs: the real clock in
// production, a [Fake] in tests, so that a test of an interval or an expiry
// advances time instead of sleeping.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers, as package time does. Implementations
// are safe for concurrent use.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer // fires at once for d <= 0
}

// Timer is the part of *time.Timer the jobs use: C() is its channel.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// Real returns the system clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// Or returns c, or the real clock when c is nil, so that a zero Config works.
func Or(c Clock) Clock {
	if c == nil {
		return Real()
	}
	return c
}

// Sleep waits for d on c or until ctx is done, whichever comes first. It returns
// ctx.Err() when ctx ended the wait (or was already done), nil otherwise.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
