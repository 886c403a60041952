package pgstore

import (
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5/pgxpool"
)

// CheckURL checks dbURL as [Connect] will read it, without connecting, so
// that a typo stops a bot while it reads its configuration. The error wraps
// [ErrBadURL] and quotes no part of the URL.
func CheckURL(dbURL string) error {
	u, err := url.Parse(dbURL)
	if err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") && u.Host != "" {
		if _, err = pgxpool.ParseConfig(dbURL); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: not a postgres:// URL such as postgres://user:password@host:5432/db (the value is not shown)", ErrBadURL)
}
