package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// fenceCode is the SQLSTATE check_fence raises for a stale token.
const fenceCode = "TGF01"

// wrap names the operation in err, and makes a refusal of the fence
// [ErrFenced].
func wrap(op string, err error) error {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == fenceCode {
		return fmt.Errorf("pgstore: %s: %w (%s)", op, ErrFenced, pe.Message)
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}
