package typednil

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIs(t *testing.T) {
	t.Parallel()
	var file *os.File
	var w io.Writer = file
	var m map[string]int
	var f func()
	for _, v := range []any{nil, file, w, m, f, []int(nil), (chan int)(nil)} {
		assert.True(t, Is(v), "%T", v)
	}
	for _, v := range []any{os.Stdout, 0, "", struct{}{}, map[string]int{}, func() {}, []int{}} {
		assert.False(t, Is(v), "%T", v)
	}
}
