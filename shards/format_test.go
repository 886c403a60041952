package shards_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/shards"
)

// A Group printed whole shows no token under any verb: its sessions hold the
// token in clear, and fmt printed them field by field under %s, %q, %x...
func TestPrintedGroupHoldsNoToken(t *testing.T) {
	t.Parallel()
	const token = "dcSEKRIT.token.value"
	g, err := shards.New(token, 4, shards.WithShardIDs(1, 3))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	var b bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%t"} {
		fmt.Fprintf(&b, verb+"\n", g)
		fmt.Fprintf(&b, verb+"\n", []any{g})
	}
	slog.New(slog.NewTextHandler(&b, nil)).Info("group", "g", g)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("group", "g", g)
	out := b.String()
	assert.NotContains(t, out, "SEKRIT")
	assert.NotContains(t, out, hex.EncodeToString([]byte("SEKRIT")))
	assert.NotContains(t, out, fmt.Sprintf("%X", "SEKRIT"))
	assert.Contains(t, fmt.Sprint(g), "shards: [1 3]")
}
