package pgstore_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
)

const secret = "s3cr3t-Pa55word"

// TestConnectNeverShowsThePassword: whatever the URL, the error holds no
// trace of the password, under any verb.
func TestConnectNeverShowsThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close()) // nothing listens there now
	for _, tc := range []struct {
		url string
		bad bool
	}{
		{"postgres://bot:" + secret + "@127.0.0.1:" + refused + "/db", false},
		{"postgres://bot:" + secret + "@127.0.0.1:notaport/db", true},
		{"postgres://bot:" + secret + "@[::1/db", true},
		{"postgres://bot:" + secret + "@127.0.0.1:" + refused + "/db?sslmode=bogus", true},
		{"postgres://bot:" + secret + "%zz@127.0.0.1/db", true},
		{"postgres://" + secret + "@127.0.0.1:" + refused + "/db", false},
		{"bot:" + secret + "@127.0.0.1:5432/db", true},
		{"host=127.0.0.1 password=" + secret, true},
	} {
		pool, err := pgstore.Connect(ctx, tc.url)
		require.Error(t, err, tc.url)
		assert.Nil(t, pool)
		assert.Equal(t, tc.bad, errorsIs(err, pgstore.ErrBadURL), "%s: %v", tc.url, err)
		for _, s := range []string{err.Error(), sprintf("%v", err), sprintf("%+v", err), sprintf("%#v", err), sprintf("%q", err)} {
			assert.NotContains(t, s, secret, "the password in the error of %s", tc.url)
			assert.NotContains(t, s, "s3cr3t", "part of the password in the error of %s", tc.url)
		}
	}
}

// TestConnect: a good URL gives a pool that answers.
func TestConnect(t *testing.T) {
	ctx := context.Background()
	pool, err := pgstore.Connect(ctx, pg.URL(t))
	require.NoError(t, err)
	defer pool.Close()
	_, err = pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
}

// TestConnectErrorKeepsItsWords: the credentials are scrubbed where they
// stand as words, never inside pgx's or the system's: user "u" gave
// "[redacted]ser=... connection ref[redacted]sed", "ed" gave "fail[redacted] to connect".
func TestConnectErrorKeepsItsWords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close())
	for _, userinfo := range []string{"u", "ed", "u:e", "ed:pw"} {
		_, err := pgstore.Connect(ctx, "postgres://"+userinfo+"@127.0.0.1:"+refused+"/db")
		require.Error(t, err, userinfo)
		msg := err.Error()
		for _, words := range []string{"failed to connect to `user=[redacted] database=db`", "connection refused", "dial error", "127.0.0.1:" + refused} {
			assert.Contains(t, msg, words, "%s: %s", userinfo, msg)
		}
	}
}
