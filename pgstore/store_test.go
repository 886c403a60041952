package pgstore_test

import (
	"testing"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterewards/storetest"
)

// TestStoreSuite runs the shared store suite (every promise of
// voterewards.Store and Feed) on PostgreSQL.
func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) voterewards.Store { return open(t, pgstore.Config{}) })
}
