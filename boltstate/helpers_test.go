package boltstate_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/boltstate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// userID and platformID make distinct snowflake-shaped ids for user n.
func userID(n int) string     { return fmt.Sprintf("7%017d", n) }
func platformID(n int) string { return fmt.Sprintf("3%017d", n) }

// open opens the state in dir, closed at cleanup.
func open(t *testing.T, dir string) *boltstate.State {
	t.Helper()
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}
