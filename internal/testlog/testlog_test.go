package testlog_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dblkit/go-topgg/internal/testlog"
)

func TestBufferTakesConcurrentWrites(t *testing.T) {
	t.Parallel()
	var b testlog.Buffer
	log := b.Logger()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				log.Debug("line")
				_ = b.String()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 800, countLines(b.String()))
}

func countLines(s string) int {
	n := 0
	for _, c := range s {
		if c == '\n' {
			n++
		}
	}
	return n
}
