package httpx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLoopback(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"localhost", "127.0.0.1", "127.0.0.2", "::1"} {
		assert.True(t, Loopback(h), h)
	}
	for _, h := range []string{"", "example.com", "10.0.0.1", "[::1]", "localhost.example", "0.0.0.0"} {
		assert.False(t, Loopback(h), h)
	}
}
