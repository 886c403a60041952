package testkit

import "sync"

// Log keeps the values a callback is given, in order; safe for concurrent
// use. The zero value is ready to use.
type Log[T any] struct {
	mu  sync.Mutex
	all []T
}

// Add appends v.
func (l *Log[T]) Add(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, v)
}

// All returns a copy of the values added so far.
func (l *Log[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.all...)
}
