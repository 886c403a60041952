package topgg

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"https://top.gg/api", "https://top.gg/api/v1/x", true},
		{"https://top.gg/api", "https://TOP.GG:443/other", true},
		{"http://127.0.0.1:8080/api", "http://127.0.0.1:8080/x", true},
		{"http://top.gg/api", "https://top.gg/api", true}, // an upgrade keeps the host
		{"http://top.gg:80/api", "https://top.gg:443/api", true},
		{"https://top.gg/api", "http://top.gg/api", false}, // a downgrade
		{"https://top.gg/api", "http://top.gg:443/api", false},
		{"https://top.gg/api", "https://www.top.gg/api", false},
		{"https://top.gg/api", "https://top.gg:8443/api", false},
		{"http://127.0.0.1:8080/api", "http://127.0.0.1:8081/api", false},
		{"http://127.0.0.1:8080/api", "https://127.0.0.1:8443/api", false},
		{"https://top.gg/api", "ftp://top.gg/api", false},
	} {
		from, err := url.Parse(tc.from)
		require.NoError(t, err)
		to, err := url.Parse(tc.to)
		require.NoError(t, err)
		require.Equal(t, tc.want, sameOrigin(from, to), "%s -> %s", tc.from, tc.to)
	}
}
