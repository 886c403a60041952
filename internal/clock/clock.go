// Package clock is the time of the module's jobs: the real clock in production, a
// [Fake] in tests (so a test advances time instead of sleeping), the one capped
// backoff ([Backoff]) and a fleet leader's [Term].
package clock

import (
	"context"
	"slices"
	"sync"
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

// Fake is a clock that moves only when told to. Its timers fire, in deadline
// order, when [Fake.Advance] or [Fake.Set] passes their deadline. Tests wait
// with assert.Eventually until [Fake.Timers] shows that the code under test is
// waiting, then advance. Safe for concurrent use.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a Fake clock reading start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the fake time reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, at: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	return t
}

// Timers returns how many timers are waiting to fire.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// Advance moves the time forward by d and fires every timer it passes.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.setLocked(f.now.Add(d))
	f.mu.Unlock()
}

// Set moves the time to t (never backwards) and fires every timer it passes.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	if t.After(f.now) {
		f.setLocked(t)
	}
	f.mu.Unlock()
}

func (f *Fake) setLocked(now time.Time) {
	f.now = now
	slices.SortStableFunc(f.timers, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
	n := 0
	for _, t := range f.timers {
		if t.at.After(now) {
			break
		}
		t.c <- now // buffered, and a timer fires once
		n++
	}
	f.timers = slices.Delete(f.timers, 0, n)
}

type fakeTimer struct {
	f  *Fake
	at time.Time
	c  chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	i := slices.Index(t.f.timers, t)
	if i < 0 {
		return false
	}
	t.f.timers = slices.Delete(t.f.timers, i, i+1)
	return true
}
