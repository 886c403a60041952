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
	_, err := parseURL(dbURL)
	return err
}

// parseURL is the one judge of a URL for CheckURL and Connect: a postgres://
// URL naming its host, or its socket in ?host= (else pgx dials a default socket).
func parseURL(dbURL string) (*pgxpool.Config, error) {
	u, err := url.Parse(dbURL)
	if err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") && (u.Hostname() != "" || u.Query().Get("host") != "") {
		if cfg, err := pgxpool.ParseConfig(dbURL); err == nil {
			return cfg, nil
		}
	}
	return nil, fmt.Errorf("%w: not a postgres:// URL such as postgres://user:password@host:5432/db (the value is not shown)", ErrBadURL)
}
