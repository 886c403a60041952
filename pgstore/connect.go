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
		return nil, fmt.Errorf("pgstore: connect to %s: %w", redact.RawURL(dbURL), scrubbed(err, &cfg.ConnConfig.Config))
	}
	return pool, nil
}

// scrubbed returns err, or only its message with the credentials scrubbed if
// it holds them or a *pgconn.ConnectError (whose Config holds the password).
// The password is the secret; the user name is when there is none
// ("postgres://secret@host"). Only whole words are scrubbed.
func scrubbed(err error, cc *pgconn.Config) error {
	secret := cc.Password
	if secret == "" {
		secret = cc.User
	}
	msg := err.Error()
	clean := redact.Words(msg, redact.Mark, secret)
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok || clean != msg {
		return errors.New(clean)
	}
	return err
}
