package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// Connect opens a pool on the database at dbURL (a postgres:// or
// postgresql:// URL) and checks that the server answers. Its errors never
// hold the password: a URL [CheckURL] refuses is [ErrBadURL]; a server that
// cannot be reached is named by host, not by URL.
func Connect(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	cfg, err := parseURL(dbURL)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		if err = pool.Ping(ctx); err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect to %s: %w", httpx.RedactRawURL(dbURL), scrubbed(err, &cfg.ConnConfig.Config))
	}
	return pool, nil
}

// scrubbed returns err, or only its message if it held a credential of cc or
// a *pgconn.ConnectError (whose Config holds the password): the password, and
// the user name of a failed dial, which names it ("postgres://secret@host"
// puts a password there), are scrubbed where they stand as whole words.
func scrubbed(err error, cc *pgconn.Config) error {
	msg := err.Error()
	_, dial := errors.AsType[*pgconn.ConnectError](err)
	clean := httpx.Words(msg, httpx.Redacted, cc.Password)
	if dial {
		clean = httpx.Words(clean, httpx.Redacted, cc.User)
	}
	if dial || clean != msg {
		return errors.New(clean)
	}
	return err
}
