package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// fenceCode is the SQLSTATE check_fence raises for a stale token.
const fenceCode = "TGF01"

// ledgerCode is the SQLSTATE check_ledger raises for a write made from a
// cached ledger that changed since.
const ledgerCode = "TGL01"

// wrap names the operation in err, makes a refusal of the fence [ErrFenced],
// and scrubs the credentials of the store's pool from it.
func (s *Store) wrap(op string, err error) error {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == fenceCode {
		return fmt.Errorf("pgstore: %s: %w (%s)", op, ErrFenced, pe.Message)
	}
	return fmt.Errorf("pgstore: %s: %w", op, s.scrub(err))
}

// scrub returns err without the credentials of the store's pool (scrubbed).
func (s *Store) scrub(err error) error { return scrubbed(err, &s.pool.Config().ConnConfig.Config) }
