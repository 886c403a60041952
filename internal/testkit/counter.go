package testkit

import (
	"maps"
	"sync"
)

// Counter counts calls per key (a vote's key, a user); safe for concurrent
// use. The zero value is ready to use.
type Counter struct {
	mu    sync.Mutex
	n     map[string]int
	total int
}

// Add counts one call for key and returns the calls for key so far.
func (c *Counter) Add(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
	c.total++
	return c.n[key]
}

// Get returns the calls counted for key.
func (c *Counter) Get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// Distinct returns how many different keys were counted.
func (c *Counter) Distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.n)
}

// Total returns how many calls were counted.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Snapshot returns a copy of the counts per key.
func (c *Counter) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}
