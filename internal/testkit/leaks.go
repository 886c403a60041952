package testkit

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// VerifyTestMain runs m and fails the package if a goroutine outlives its
// tests (goleak.VerifyTestMain), once discordgo's close handshakes are over.
func VerifyTestMain(m *testing.M) { goleak.VerifyTestMain(afterHandshakes{m}) }

// handshake bounds the wait for a session closed by its peer: its listen
// goroutine sleeps one second in CloseWithCode, which is not a leak; still
// being there after the bound is.
const handshake = 3 * time.Second

type afterHandshakes struct{ m goleak.TestingM }

func (a afterHandshakes) Run() int {
	code := a.m.Run()
	awaitHandshakes(handshake)
	return code
}

// awaitHandshakes waits, at most bound, while a goroutine is in discordgo's
// CloseWithCode.
func awaitHandshakes(bound time.Duration) {
	for deadline := time.Now().Add(bound); inHandshake() && time.Now().Before(deadline); {
		time.Sleep(Tick)
	}
}

func inHandshake() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), "github.com/bwmarrin/discordgo.(*Session).CloseWithCode(")
		}
		buf = make([]byte, 2*len(buf))
	}
}
