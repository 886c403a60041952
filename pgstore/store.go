package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// DefaultSchema is [Config.Schema]'s default.
const DefaultSchema = "topgg"

// DefaultTxTimeout is [Config.TxTimeout]'s default: a fleet's default lease TTL.
const DefaultTxTimeout = 15 * time.Second

// Errors, for errors.Is.
var (
	// ErrFenced means a leader write was refused: another process leads now,
	// or this one does not. Nothing of it was committed.
	ErrFenced = errors.New("pgstore: write refused by the fence: not the current leader")
	// ErrSchemaTooNew is returned by [Open] when the database's schema was
	// made by a newer version of this package.
	ErrSchemaTooNew = errors.New("pgstore: the database schema is newer than this code knows")
	// ErrBadURL is returned by [Connect] for a URL it cannot parse; the error
	// never holds the password.
	ErrBadURL = errors.New("pgstore: malformed database URL")
	// ErrUnknownVote is returned by the handlers of [Store.Reward] and
	// [Store.Expiry] for a vote the store does not hold.
	ErrUnknownVote = errors.New("pgstore: vote not in the store")
)

// Config configures [Open]; the zero Config is schema "topgg", one process, no logs.
type Config struct {
	// Schema is the PostgreSQL schema holding the store's tables, created if
	// missing (default [DefaultSchema]): lower-case letters, digits and
	// underscores, starting with a letter or underscore, at most 50 bytes.
	Schema string
	// TxTimeout bounds the store's transactions and lock waits (default
	// [DefaultTxTimeout], at least a millisecond): PostgreSQL aborts one idle
	// for longer, rolling back all of it, so a paused leader stalls the
	// fleet no longer and commits nothing past it. A fleet leader's limit is
	// cut to what is left of its clock. A TxHandler must finish within it.
	TxTimeout time.Duration
	// Retention, if set, deletes a vote once it is older than Retention and
	// out of the dedup set, its reward and expiry handled; the ledger stays
	// whole. Zero keeps every vote: the votes table grows by a row a vote.
	Retention time.Duration
	// Logger receives the feed's reconnections; nil discards them.
	Logger *slog.Logger
}

// schemaName is what Config.Schema may be: a plain identifier, which needs no
// quoting in the NOTIFY channel (within PostgreSQL's 63 bytes) and lock keys.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,49}$`)

// Store is a [voterewards.State] and [voterewards.Feed] in PostgreSQL, shared
// by every process of a fleet. Safe for concurrent use.
type Store struct {
	pool      *pgxpool.Pool
	fence     atomic.Pointer[voterewards.Fence] // set once, by UseFence
	log       *slog.Logger
	schema    string
	channel   string        // the NOTIFY channel of added votes
	lockNS    string        // prefix of the voter lock keys
	timeout   time.Duration // Config.TxTimeout
	retention time.Duration // Config.Retention
	q         queries
	group     group        // the group commit of Ingests without a checkpoint
	ledgers   ledgers      // the voters' ledgers after this process wrote them
	reads     atomic.Int64 // Ingest's ledger reads (for tests: the writes ledgers did not serve)

	followCheck time.Duration // how often Follow checks for lost notifications

	// claimed is the newest token this process raised the fence to; a newer
	// one is a new term, whose first action raises the fence.
	claimed atomic.Int64
}

var (
	_ voterewards.State = (*Store)(nil)
	_ voterewards.Feed  = (*Store)(nil)
)

// Open returns the store kept in pool's database under cfg.Schema, creating
// or migrating the schema first, once even when processes open at once. A
// schema newer than [SchemaVersion] is [ErrSchemaTooNew]. The pool stays the
// caller's: close it after the last use of the Store.
func Open(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("pgstore: Open: %w (pool)", topgg.ErrNilArgument)
	}
	schema := cfg.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	if !schemaName.MatchString(schema) {
		return nil, &topgg.ConfigError{Field: "pgstore.Config.Schema", Problem: fmt.Sprintf("%q: lower-case letters, digits and _, at most 50", schema)}
	}
	timeout := cfg.TxTimeout
	if timeout == 0 {
		timeout = DefaultTxTimeout
	}
	if timeout < time.Millisecond {
		return nil, &topgg.ConfigError{Field: "pgstore.Config.TxTimeout", Problem: fmt.Sprintf("%v: at least 1ms (0: %v)", cfg.TxTimeout, DefaultTxTimeout)}
	}
	if cfg.Retention < 0 {
		return nil, &topgg.ConfigError{Field: "pgstore.Config.Retention", Problem: fmt.Sprintf("%v is negative", cfg.Retention)}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := migrate(ctx, pool, schema); err != nil {
		return nil, err
	}
	return &Store{
		pool: pool, log: log, schema: schema,
		channel: "topgg_votes_" + schema, lockNS: "go-topgg/pgstore:" + schema + ":",
		timeout: timeout, retention: cfg.Retention,
		q: newQueries(pgx.Identifier{schema}.Sanitize()), followCheck: followCheck,
		group: group{turn: make(chan struct{}, 1)},
	}, nil
}

// Schema returns the schema the store's tables are in.
func (s *Store) Schema() string { return s.schema }

// Format prints the Store as "pgstore.Store" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*Store) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "pgstore.Store") }

// txLimit is TxTimeout in milliseconds for set_config, cut to what is left of
// a fleet leader's term: a leader paused past its lease holds no lock longer.
func (s *Store) txLimit(ctx context.Context) string {
	d := s.timeout
	if left, ok := clock.TermFrom(ctx).Left(); ok {
		d = max(min(d, left), time.Millisecond)
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}
