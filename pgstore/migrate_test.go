package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestMigrateFromVersion1: Open migrates a database at schema version 1
// with nothing lost (votes, ledger, checkpoint, and the opt-ins in the
// reminders table version 1's Store.Reminders made on first use), and the
// new tables work; a version-1 database without that table (a bot without
// reminders) gets it.
func TestMigrateFromVersion1(t *testing.T) {
	for _, lazy := range []bool{true, false} {
		t.Run(fmt.Sprintf("lazy table %v", lazy), func(t *testing.T) {
			ctx := context.Background()
			pool := pg.Pool(t)
			s, err := pgstore.Open(ctx, pool, pgstore.Config{})
			require.NoError(t, err)
			v := vote(1, base)
			ingest(t, s, &voterewards.Checkpoint{Cursor: "c"}, v, vote(2, base))
			// Back to version 1: without version 2's tables, and with the
			// reminders table as version 1 made it, holding opt-ins.
			_, err = pool.Exec(ctx, `DROP TABLE topgg.reminders, topgg.command_hash;
				DELETE FROM topgg.schema_version WHERE version > 1`)
			require.NoError(t, err)
			if lazy {
				_, err = pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS topgg.reminders (
						user_id text COLLATE "C" PRIMARY KEY,
						last_key text NOT NULL DEFAULT ''
					);
					INSERT INTO topgg.reminders (user_id) VALUES ('1'), ('2');
					UPDATE topgg.reminders SET last_key = '1@k' WHERE user_id = '1'`)
				require.NoError(t, err)
			}

			s, err = pgstore.Open(ctx, pool, pgstore.Config{})
			require.NoError(t, err)
			var version int
			require.NoError(t, pool.QueryRow(ctx, "SELECT max(version) FROM topgg.schema_version").Scan(&version))
			assert.Equal(t, pgstore.SchemaVersion, version)
			snap, err := s.Load(ctx)
			require.NoError(t, err)
			assert.Equal(t, "c", snap.Checkpoint.Cursor)
			assert.Len(t, snap.Seen, 2)
			assert.Len(t, snap.Pending, 2)
			st, err := s.Stats(ctx, v.PlatformID)
			require.NoError(t, err)
			assert.Equal(t, v.Weight, st.Total)
			for user, want := range map[string]string{"1": "1@k", "2": ""} {
				on, last, err := s.Reminder(ctx, user)
				require.NoError(t, err)
				assert.Equal(t, lazy, on, "user %s opted in", user)
				if lazy {
					assert.Equal(t, want, last, "user %s's last reminder", user)
				}
			}
			require.NoError(t, s.SetReminder(ctx, "3", true))
			require.NoError(t, s.Reminded(ctx, "3", "3@k"))
			_, last, err := s.Reminder(ctx, "3")
			require.NoError(t, err)
			assert.Equal(t, "3@k", last)
			require.NoError(t, s.SaveHash(ctx, "h1"))
			hash, err := s.LoadHash(ctx)
			require.NoError(t, err)
			assert.Equal(t, "h1", hash)
		})
	}
}
