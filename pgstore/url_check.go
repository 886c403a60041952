package pgstore

import (
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5/pgxpool"
)

// CheckURL checks dbURL as [Connect] will read it, without connecting: a
// postgres:// or postgresql:// URL with a host that pgx parses (port, options
// such as sslmode). A bot calls it while reading its configuration, so that
// a typo stops it at once rather than when it connects. The error wraps
// [ErrBadURL] and quotes no part of the URL: it holds a password.
func CheckURL(dbURL string) error {
	u, err := url.Parse(dbURL)
	if err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") && u.Host != "" {
		if _, err = pgxpool.ParseConfig(dbURL); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: not a postgres:// URL such as postgres://user:password@host:5432/db (the value is not shown)", ErrBadURL)
}
