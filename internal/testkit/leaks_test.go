package testkit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/discordtest"
)

// TestSessionClosedByPeerIsNoLeak: a session whose server closes first
// sleeps in discordgo's CloseWithCode; once the handshake is awaited, no
// goroutine of it is left.
func TestSessionClosedByPeerIsNoLeak(t *testing.T) {
	before := goleak.IgnoreCurrent()
	dc, err := discordtest.NewServer()
	require.NoError(t, err)
	s, err := dc.NewSession(0, 1)
	require.NoError(t, err)
	require.NoError(t, s.Open())
	dc.Close()
	require.Eventually(t, inHandshake, Wait, Tick, "the session never started closing")

	awaitHandshakes(handshake)
	goleak.VerifyNone(t, before)
}

// TestStuckInCloseWithCodeIsALeak: a goroutine that never leaves
// CloseWithCode (here blocked on the session's lock) is reported once the
// bounded handshake is over.
func TestStuckInCloseWithCodeIsALeak(t *testing.T) {
	before := goleak.IgnoreCurrent()
	dc, err := discordtest.NewServer()
	require.NoError(t, err)
	s, err := dc.NewSession(0, 1)
	require.NoError(t, err)
	dc.Close()
	s.Lock()
	closed := make(chan struct{})
	go func() { assert.NoError(t, s.Close()); close(closed) }()
	t.Cleanup(func() { s.Unlock(); Recv(t, closed, "Close did not return") })
	require.Eventually(t, inHandshake, Wait, Tick, "Close never started")

	awaitHandshakes(100 * time.Millisecond)
	err = goleak.Find(before)
	require.Error(t, err)
	require.Contains(t, err.Error(), "CloseWithCode")
}
