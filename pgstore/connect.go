package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dblkit/go-topgg/internal/redact"
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
		return nil, fmt.Errorf("pgstore: connect to %s: %w", redact.RawURL(dbURL), scrubbed(err, cfg.ConnConfig.Password, cfg.ConnConfig.User))
	}
	return pool, nil
}

// scrubbed returns err, or only its message with the credentials scrubbed if
// it holds them or a *pgconn.ConnectError (whose Config holds the password).
// The user name counts: "postgres://secret@host" puts a password there.
func scrubbed(err error, credentials ...string) error {
	for _, c := range credentials {
		if c != "" {
			err = redact.NewScrubber(c).Err(err)
		}
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		err = errors.New(err.Error())
	}
	return err
}
