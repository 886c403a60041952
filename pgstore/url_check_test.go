package pgstore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
)

// TestCheckURL: the URLs Connect takes pass without a server; malformed
// ones fail with ErrBadURL and show neither the password nor the host.
func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"postgres://bot:hunter2@db.example:5432/bot?sslmode=require", "postgresql://db.example/bot", "postgres://127.0.0.1:1/x",
	} {
		assert.NoError(t, pgstore.CheckURL(ok), ok)
	}
	for _, bad := range []string{
		"", "mysql://bot:hunter2@db.example/bot", "host=db.example password=hunter2", "postgres://bot:hunter2@[::1/bot",
		"postgres://bot:hunter2@db.example:99999/bot", "postgres://bot:hunter2@db.example/bot?sslmode=maybe", "postgres:///bot",
	} {
		err := pgstore.CheckURL(bad)
		require.ErrorIs(t, err, pgstore.ErrBadURL, bad)
		assert.NotContains(t, err.Error(), "hunter2")
		assert.NotContains(t, err.Error(), "db.example")
	}
}
