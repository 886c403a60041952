package pgstore_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

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

// TestConnectRefusesWhatCheckURLRefuses: one judge for one URL. A URL with
// user info but no host ("postgres://u:pw@/db") was ErrBadURL for CheckURL
// while Connect dialed the default unix socket; a socket named in ?host= is
// taken by both.
func TestConnectRefusesWhatCheckURLRefuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tcp := pg.URL(t)
	var dir string
	require.NoError(t, openPool(t, tcp).QueryRow(ctx, "SHOW unix_socket_directories").Scan(&dir))
	socket, err := url.Parse(tcp)
	require.NoError(t, err)
	socket.Host, socket.RawQuery = "", url.Values{"host": {dir}, "port": {socket.Port()}}.Encode()
	for _, tc := range []struct {
		url string
		bad bool
	}{
		{"postgres://u:pw@/db", true},
		{"postgres://u:pw@:5432/db", true},
		{"postgres:///db", true},
		{"postgresql://u@/db?sslmode=disable", true},
		{"mysql://u:pw@127.0.0.1/db", true},
		{socket.String(), false},
		{tcp, false},
	} {
		checked := pgstore.CheckURL(tc.url)
		pool, err := pgstore.Connect(ctx, tc.url)
		if pool != nil {
			pool.Close()
		}
		assert.Equal(t, tc.bad, errors.Is(checked, pgstore.ErrBadURL), "CheckURL(%s): %v", tc.url, checked)
		assert.Equal(t, tc.bad, errors.Is(err, pgstore.ErrBadURL), "Connect(%s): %v", tc.url, err)
		if !tc.bad {
			assert.NoError(t, err, tc.url)
		}
	}
}
