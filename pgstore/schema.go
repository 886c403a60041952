package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the version of the schema this code creates and reads.
// [Open] migrates an older schema to it and refuses a newer one.
const SchemaVersion = len(migrations)

// migrations are the schema's versions: migrations[i] brings version i to
// i+1 (%[1]s is the quoted schema name). Released entries never change.
var migrations = [...]string{
	// 1: every vote (seen: in the dedup set; pending, expiry_pending: the
	// work left; reward_done, expiry_done: the transactional handlers'
	// marks), the checkpoint, the ledgers and the fence. Times are Unix
	// nanoseconds, as the votes' keys, which timestamptz would round.
	`CREATE TABLE %[1]s.votes (
		id bigserial PRIMARY KEY,
		key text COLLATE "C" NOT NULL,
		voter text COLLATE "C" NOT NULL,
		user_id text NOT NULL,
		platform_id text NOT NULL,
		weight int NOT NULL,
		created_ns bigint NOT NULL,
		expires_ns bigint NOT NULL,
		origin smallint NOT NULL,
		hook json,
		stats json NOT NULL,
		seen boolean NOT NULL DEFAULT true,
		pending boolean NOT NULL DEFAULT true,
		expiry_pending boolean NOT NULL DEFAULT false,
		reward_done boolean NOT NULL DEFAULT false,
		expiry_done boolean NOT NULL DEFAULT false
	);
	CREATE INDEX votes_dedup ON %[1]s.votes (voter, created_ns) WHERE seen;
	CREATE INDEX votes_key ON %[1]s.votes (key);
	CREATE INDEX votes_pending ON %[1]s.votes (id) WHERE pending;
	CREATE INDEX votes_expiry_pending ON %[1]s.votes (id) WHERE expiry_pending;
	CREATE INDEX votes_seen_created ON %[1]s.votes (created_ns) WHERE seen;
	CREATE TABLE %[1]s.checkpoint (
		id int PRIMARY KEY CHECK (id = 1),
		cursor text NOT NULL,
		last_seen_ns bigint,
		since_ns bigint
	);
	CREATE TABLE %[1]s.voters (
		voter text COLLATE "C" PRIMARY KEY,
		votes int NOT NULL,
		total bigint NOT NULL,
		streak int NOT NULL,
		best_streak int NOT NULL,
		streak_until_ns bigint,
		month_ns bigint,
		month_votes int NOT NULL,
		month_total bigint NOT NULL,
		last_vote_ns bigint
	);
	CREATE INDEX voters_board ON %[1]s.voters (total DESC, last_vote_ns, voter);
	CREATE TABLE %[1]s.voter_months (
		month_ns bigint NOT NULL,
		voter text COLLATE "C" NOT NULL,
		votes int NOT NULL,
		total bigint NOT NULL,
		reached_ns bigint NOT NULL,
		PRIMARY KEY (month_ns, voter)
	);
	CREATE INDEX voter_months_board ON %[1]s.voter_months (month_ns, total DESC, reached_ns, voter);
	CREATE TABLE %[1]s.fence (id int PRIMARY KEY CHECK (id = 1), token bigint NOT NULL);
	INSERT INTO %[1]s.fence VALUES (1, 0);
	-- check_fence raises the fence to tok, or fails (SQLSTATE TGF01) if a
	-- newer token was seen. The share lock it leaves until commit makes a
	-- newer leader's raise wait for this transaction, and this one see it.
	CREATE FUNCTION %[1]s.check_fence(tok bigint) RETURNS void LANGUAGE plpgsql AS $f$
	DECLARE cur bigint;
	BEGIN
		IF tok IS NULL OR tok <= 0 THEN
			RAISE EXCEPTION 'pgstore: no lease token' USING ERRCODE = 'TGF01';
		END IF;
		SELECT token INTO cur FROM %[1]s.fence WHERE id = 1;
		IF cur < tok THEN
			UPDATE %[1]s.fence SET token = tok WHERE id = 1 AND token < tok;
		END IF;
		SELECT token INTO cur FROM %[1]s.fence WHERE id = 1 FOR SHARE;
		IF cur <> tok THEN
			RAISE EXCEPTION 'pgstore: lease token %% is older than %%', tok, cur USING ERRCODE = 'TGF01';
		END IF;
	END $f$;`,
	// 2: the reminder opt-ins (IF NOT EXISTS: version 1 made the table on
	// first use) and the last published command hash.
	`CREATE TABLE IF NOT EXISTS %[1]s.reminders (
		user_id text COLLATE "C" PRIMARY KEY,
		last_key text NOT NULL DEFAULT ''
	);
	CREATE TABLE %[1]s.command_hash (id int PRIMARY KEY CHECK (id = 1), hash text NOT NULL);`,
	// 3: the votes Config.Retention may delete.
	`CREATE INDEX IF NOT EXISTS votes_retired ON %[1]s.votes (created_ns) WHERE NOT (seen OR pending OR expiry_pending);`,
	// 4: check_ledger fails (SQLSTATE TGL01) unless ok, rolling back the
	// ingest's write made from a cached ledger that changed since.
	`CREATE FUNCTION %[1]s.check_ledger(ok boolean) RETURNS void LANGUAGE plpgsql AS $f$
	BEGIN
		IF NOT ok THEN
			RAISE EXCEPTION 'pgstore: a ledger changed since it was read' USING ERRCODE = 'TGL01';
		END IF;
	END $f$;`,
	// 5: fewer rows and index entries a vote. A voter's newest month
	// standing is its ledger row's (month_ns, month_votes, month_total,
	// last_vote_ns); voter_past_months (voter_months, renamed so that a
	// process of an older release fails instead of counting a month twice)
	// keeps its older months, so that a vote in its newest writes no month row. One index by voter and
	// time serves the dedup reads and the lookups by key (a key is its voter
	// and time); one of the live votes (in the dedup set or with work left)
	// serves Load and Prune.
	`DELETE FROM %[1]s.voter_months m USING %[1]s.voters o WHERE m.voter = o.voter AND m.month_ns = o.month_ns;
	ALTER TABLE %[1]s.voter_months RENAME TO voter_past_months;
	ALTER INDEX %[1]s.voter_months_board RENAME TO voter_past_months_board;
	CREATE INDEX voters_month_board ON %[1]s.voters (month_ns, month_total DESC, last_vote_ns, voter);
	CREATE INDEX votes_voter ON %[1]s.votes (voter, created_ns);
	CREATE INDEX votes_live ON %[1]s.votes (id) WHERE seen OR pending OR expiry_pending;
	DROP INDEX %[1]s.votes_dedup, %[1]s.votes_key, %[1]s.votes_pending, %[1]s.votes_expiry_pending, %[1]s.votes_seen_created;`,
}

// migrate creates or migrates the schema in one transaction, under an advisory
// lock: a second process opening at once waits and finds the work done.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: open: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "go-topgg/pgstore migrate:"+schema); err != nil {
		return fmt.Errorf("pgstore: open: lock: %w", err)
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE SCHEMA IF NOT EXISTS %[1]s;
		CREATE TABLE IF NOT EXISTS %[1]s.schema_version (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`, q)); err != nil {
		return fmt.Errorf("pgstore: open: schema %q: %w", schema, err)
	}
	var have int
	if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT coalesce(max(version), 0) FROM %s.schema_version", q)).Scan(&have); err != nil {
		return fmt.Errorf("pgstore: open: version: %w", err)
	}
	if have > SchemaVersion {
		return fmt.Errorf("%w: schema %q is at version %d, this code knows up to %d: upgrade go-topgg", ErrSchemaTooNew, schema, have, SchemaVersion)
	}
	for v := have; v < SchemaVersion; v++ {
		if _, err := tx.Exec(ctx, fmt.Sprintf(migrations[v], q)); err != nil {
			return fmt.Errorf("pgstore: open: migrate schema %q to version %d: %w", schema, v+1, err)
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf("INSERT INTO %s.schema_version (version) VALUES ($1)", q), v+1); err != nil {
			return fmt.Errorf("pgstore: open: migrate schema %q to version %d: %w", schema, v+1, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: open: %w", err)
	}
	return nil
}
