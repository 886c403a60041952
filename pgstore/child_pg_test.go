//go:build unix

package pgstore_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
)

// startPostgres starts a PostgreSQL server of the test's own (the children
// of the crash and fleet tests load it hard) and returns the URL of a fresh
// database on it: no secret in it (trust auth on 127.0.0.1).
func startPostgres(t *testing.T) string {
	t.Helper()
	return pgstoretest.Start(t).URL(t)
}

// connect opens a pool on dsn, closed at the test's cleanup.
func connect(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	return openPool(t, dsn)
}
