package fleet

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dblkit/go-topgg/topgg"
)

// No error of ParseURL shows the password, wherever the URL holds it: after
// the colon, or alone before the @ (the pre-ACL form "redis://secret@host").
func TestParseURLErrorsShowNoPassword(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"redis://:hunter2@127.0.0.1:6379/x",
		"redis://user:hunter2@127.0.0.1:6379/1/2",
		"redis://hunter2@127.0.0.1:6379/x",
		"http://hunter2@127.0.0.1:6379",
		"redis://u:hunter2@127.0.0.1:6379/0?dial_timeout=hunter2",
	} {
		_, err := parseURL(raw)
		if assert.ErrorAs(t, err, new(*topgg.ConfigError), raw) {
			assert.NotContains(t, err.Error(), "hunter2", raw)
		}
	}
	_, err := parseURL("redis://user:pw@127.0.0.1:6379/x")
	assert.Contains(t, err.Error(), "redis://xxxxx@127.0.0.1:6379/x", "the user info is marked, not shown")
}

// TestParseURLErrorsKeepTheirWords: a short password or pre-ACL user name is
// scrubbed where it stands alone, not inside the words of go-redis's message
// ("e" garbled "r[xxxxx]dis: invalid databas[xxxxx]").
func TestParseURLErrorsKeepTheirWords(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"redis://:e@127.0.0.1:6379/x", "redis://e@127.0.0.1:6379/x", "redis://user:r@127.0.0.1:6379/x"} {
		_, err := parseURL(raw)
		if assert.ErrorAs(t, err, new(*topgg.ConfigError), raw) {
			assert.Contains(t, err.Error(), `redis: invalid database number: "x"`, raw)
		}
	}
}
