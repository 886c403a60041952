package testlog_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testlog"
)

const childModeEnv = "TESTLOG_CHILD" // "block": print and run until killed; "exit": print and exit

// TestChildHelper is the child of TestChild.
func TestChildHelper(t *testing.T) {
	mode := os.Getenv(childModeEnv)
	if mode == "" {
		t.Skip("run by TestChild")
	}
	fmt.Println("line 1")
	fmt.Println("other")
	fmt.Println("line 2")
	fmt.Fprintln(os.Stderr, "on stderr")
	if mode == "block" {
		select {}
	}
}

// TestChild: a child's lines are read as they come, with their times; a
// wait ends at the lines waited for or at the end of stdout; Kill kills a
// stopped child, says when the child had exited by itself, and can be
// called twice.
func TestChild(t *testing.T) {
	t.Parallel()
	c := testlog.StartChild(t, "blocker", "TestChildHelper", childModeEnv+"=block")
	require.Equal(t, 2, c.WaitLines("line ", 2, time.Minute))
	lines := c.Lines("line ")
	require.Len(t, lines, 2)
	assert.Equal(t, []string{"1", "2"}, []string{lines[0].Text, lines[1].Text})
	assert.False(t, lines[1].At.Before(lines[0].At))
	assert.True(t, c.Alive())
	require.NoError(t, c.Signal(syscall.SIGSTOP))
	require.NoError(t, c.Kill())
	require.NoError(t, c.Kill(), "a second Kill")
	assert.False(t, c.Alive())

	e := testlog.StartChild(t, "exiter", "TestChildHelper", childModeEnv+"=exit")
	assert.Equal(t, 2, e.WaitLines("line ", 3, time.Minute), "stdout ended with 2")
	require.True(t, e.Wait(time.Minute))
	err := e.Kill()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exiter was not killed but exited")
	assert.Contains(t, err.Error(), "on stderr")
	assert.Regexp(t, `\d\d:\d\d:\d\d\.\d{3} other\n`, e.Output())
	assert.Equal(t, err, e.Kill(), "a second Kill")
}
