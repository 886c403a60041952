package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterewards/storetest"
)

// TestStoreSuite runs the shared store suite (every promise of
// voterewards.Store and Feed) on PostgreSQL.
func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) voterewards.State { return open(t, pgstore.Config{}) })
}

// TestKeepsEveryVote: Prune takes votes out of the dedup set only; the
// votes stay in the table (PostgreSQL keeps every vote), and the ledger.
func TestKeepsEveryVote(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	old := vote(1, base)
	ingest(t, s, nil, old)
	later := base.Add(3 * voterewards.VoteLifetime)
	require.NoError(t, s.Prune(ctx, later, later))
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Seen)
	var kept int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM topgg.votes").Scan(&kept))
	assert.Equal(t, 1, kept, "the pruned vote is kept")
	st, err := s.Stats(ctx, old.PlatformID)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes)
}

// TestStorePrintsByName: fmt of a Store walked its pool's live state; under
// every verb it prints its name alone.
func TestStorePrintsByName(t *testing.T) {
	s := open(t, pgstore.Config{})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		assert.Equal(t, "pgstore.Store", fmt.Sprintf(verb, s), verb)
	}
}

// TestRetentionDeletesOnlyHandledVotesOutOfTheDedupSet: with a Retention,
// Prune deletes the votes that left the dedup set and are older than it,
// once their reward and expiry are handled; a vote still pending, one in
// the dedup set, and every voter's ledger stay. A negative Retention is refused.
func TestRetentionDeletesOnlyHandledVotesOutOfTheDedupSet(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	_, err := pgstore.Open(ctx, pool, pgstore.Config{Retention: -time.Hour})
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "pgstore.Config.Retention", ce.Field)
	s, err := pgstore.Open(ctx, pool, pgstore.Config{Retention: 24 * time.Hour})
	require.NoError(t, err)
	done, pending, expiring := vote(1, base), vote(2, base), vote(3, base)
	ingest(t, s, nil, done, pending, expiring)
	require.NoError(t, s.Delivered(ctx, done, false))
	require.NoError(t, s.Delivered(ctx, expiring, true)) // its expiry not handled yet
	later := base.Add(3 * voterewards.VoteLifetime)
	recent := vote(4, later)
	ingest(t, s, nil, recent)

	require.NoError(t, s.Prune(ctx, later, later)) // out of the dedup set; not yet older than Retention
	keys := func() []string {
		rows, err := pool.Query(ctx, "SELECT key FROM topgg.votes ORDER BY id")
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	require.Len(t, keys(), 4, "deleted before its Retention")
	require.NoError(t, s.Prune(ctx, later, later.Add(24*time.Hour)))
	assert.Equal(t, []string{pending.Key(), expiring.Key(), recent.Key()}, keys(), "only the handled vote past its Retention goes")
	for _, v := range []voterewards.Vote{done, pending, expiring, recent} {
		st, err := s.Stats(ctx, v.PlatformID)
		require.NoError(t, err)
		assert.Equal(t, 1, st.Votes, "the ledger lost a deleted vote")
	}
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	require.Len(t, snap.Pending, 2)
	assert.ElementsMatch(t, []string{pending.Key(), recent.Key()}, []string{snap.Pending[0].Key(), snap.Pending[1].Key()})
	require.Len(t, snap.Expiries, 1)
	assert.Equal(t, expiring.Key(), snap.Expiries[0].Key())
	assert.Len(t, snap.Seen, 1, "the recent vote stays in the dedup set")
}

// TestOpenConcurrently: processes opening one new database at once create
// the schema once, and every one of them gets a working store.
func TestOpenConcurrently(t *testing.T) {
	ctx := context.Background()
	dbURL := pg.URL(t)
	const n = 6
	stores := make([]*pgstore.Store, n)
	var wg sync.WaitGroup
	for i := range n {
		pool := openPool(t, dbURL) // one pool per process
		wg.Go(func() {
			s, err := pgstore.Open(ctx, pool, pgstore.Config{})
			assert.NoError(t, err)
			stores[i] = s
		})
	}
	wg.Wait()
	for _, s := range stores {
		require.NotNil(t, s)
	}
	ingest(t, stores[0], nil, vote(1, base))
	assert.Empty(t, ingest(t, stores[n-1], nil, vote(1, base)), "one database, one dedup set")
	var versions int
	require.NoError(t, openPool(t, dbURL).QueryRow(ctx, "SELECT count(*) FROM topgg.schema_version").Scan(&versions))
	assert.Equal(t, pgstore.SchemaVersion, versions, "each migration applied once")
}

// TestOpenRefusesNewerSchema: a schema made by a newer version of the code
// is an error naming both versions, not a guess.
func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	_, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "INSERT INTO topgg.schema_version (version) VALUES ($1)", pgstore.SchemaVersion+1)
	require.NoError(t, err)
	_, err = pgstore.Open(ctx, pool, pgstore.Config{})
	require.ErrorIs(t, err, pgstore.ErrSchemaTooNew)
	assert.Contains(t, err.Error(), fmt.Sprintf("version %d", pgstore.SchemaVersion+1))
	_, err = pgstore.Open(ctx, pool, pgstore.Config{Schema: "other"})
	assert.NoError(t, err, "another schema is another store")
}

// TestOpenMisuse: a nil pool and a schema name that is no plain identifier
// are errors.
func TestOpenMisuse(t *testing.T) {
	ctx := context.Background()
	_, err := pgstore.Open(ctx, nil, pgstore.Config{})
	assert.ErrorIs(t, err, topgg.ErrNilArgument)
	pool := pg.Pool(t)
	for _, bad := range []string{"Topgg", "a-b", `x"; DROP TABLE y; --`, "1abc", strings.Repeat("a", 51)} {
		_, err = pgstore.Open(ctx, pool, pgstore.Config{Schema: bad})
		assert.ErrorAs(t, err, new(*topgg.ConfigError), "%q", bad)
	}
}

// TestSchemasAreSeparate: two schemas in one database are two stores, and
// the longest schema name works, feed included.
func TestSchemasAreSeparate(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	long, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: strings.Repeat("z", 50)})
	require.NoError(t, err)
	got, resyncs := follow(t, long)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")
	ingest(t, long, nil, vote(9, base))
	assert.Equal(t, vote(9, base).Key(), receive(t, got, 5*time.Second, "no vote on the long schema's feed").Key())
	a, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "bot_a"})
	require.NoError(t, err)
	b, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "bot_b"})
	require.NoError(t, err)
	assert.Equal(t, "bot_a", a.Schema())
	ingest(t, a, nil, vote(1, base))
	assert.Len(t, ingest(t, b, nil, vote(1, base)), 1)
	st, err := b.Stats(ctx, vote(1, base).PlatformID)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes)
	var _ voterewards.State = a
}

const secret = "s3cr3t-Pa55word"

// TestConnectNeverShowsThePassword: whatever the URL, the error holds no
// trace of the password, under any verb.
func TestConnectNeverShowsThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close()) // nothing listens there now
	for _, tc := range []struct {
		url string
		bad bool
	}{
		{"postgres://bot:" + secret + "@127.0.0.1:" + refused + "/db", false},
		{"postgres://bot:" + secret + "@127.0.0.1:notaport/db", true},
		{"postgres://bot:" + secret + "@[::1/db", true},
		{"postgres://bot:" + secret + "@127.0.0.1:" + refused + "/db?sslmode=bogus", true},
		{"postgres://bot:" + secret + "%zz@127.0.0.1/db", true},
		{"postgres://" + secret + "@127.0.0.1:" + refused + "/db", false},
		{"bot:" + secret + "@127.0.0.1:5432/db", true},
		{"host=127.0.0.1 password=" + secret, true},
	} {
		pool, err := pgstore.Connect(ctx, tc.url)
		require.Error(t, err, tc.url)
		assert.Nil(t, pool)
		assert.Equal(t, tc.bad, errorsIs(err, pgstore.ErrBadURL), "%s: %v", tc.url, err)
		for _, s := range []string{err.Error(), sprintf("%v", err), sprintf("%+v", err), sprintf("%#v", err), sprintf("%q", err)} {
			assert.NotContains(t, s, secret, "the password in the error of %s", tc.url)
			assert.NotContains(t, s, "s3cr3t", "part of the password in the error of %s", tc.url)
		}
	}
}

// TestConnect: a good URL gives a pool that answers.
func TestConnect(t *testing.T) {
	ctx := context.Background()
	pool, err := pgstore.Connect(ctx, pg.URL(t))
	require.NoError(t, err)
	defer pool.Close()
	_, err = pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
}

// TestConnectErrorKeepsItsWords: the credentials are scrubbed where they
// stand as words, never inside pgx's or the system's: user "u" gave
// "[redacted]ser=... connection ref[redacted]sed", "ed" gave "fail[redacted] to connect".
func TestConnectErrorKeepsItsWords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close())
	for _, userinfo := range []string{"u", "ed", "u:e", "ed:pw"} {
		_, err := pgstore.Connect(ctx, "postgres://"+userinfo+"@127.0.0.1:"+refused+"/db")
		require.Error(t, err, userinfo)
		msg := err.Error()
		for _, words := range []string{"failed to connect to `user=[redacted] database=db`", "connection refused", "dial error", "127.0.0.1:" + refused} {
			assert.Contains(t, msg, words, "%s: %s", userinfo, msg)
		}
	}
}

// TestMigrateFromVersion1: Open migrates a database at schema version 1
// with nothing lost (votes, ledger, month boards, checkpoint, and the opt-ins
// in the reminders table version 1's Store.Reminders made on first use), and
// the new tables work; a version-1 database without that table (a bot without
// reminders) gets it. Version 1 kept every month's standing in voter_months,
// the newest too: counted once after the migration, and by the next vote.
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
			_, err = pool.Exec(ctx, `DROP TABLE topgg.reminders, topgg.command_hash; DROP FUNCTION topgg.check_ledger;
				DROP INDEX topgg.voters_month_board, topgg.votes_voter, topgg.votes_live;
				ALTER TABLE topgg.voter_past_months RENAME TO voter_months;
				ALTER INDEX topgg.voter_past_months_board RENAME TO voter_months_board;
				CREATE INDEX votes_dedup ON topgg.votes (voter, created_ns) WHERE seen;
				CREATE INDEX votes_key ON topgg.votes (key);
				CREATE INDEX votes_pending ON topgg.votes (id) WHERE pending;
				CREATE INDEX votes_expiry_pending ON topgg.votes (id) WHERE expiry_pending;
				CREATE INDEX votes_seen_created ON topgg.votes (created_ns) WHERE seen;
				INSERT INTO topgg.voter_months SELECT month_ns, voter, month_votes, month_total, last_vote_ns FROM topgg.voters;
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

			month := func() []voterewards.Standing {
				b, err := s.Leaderboard(ctx, base, 10)
				require.NoError(t, err)
				return b
			}
			v2 := vote(2, base)
			want := []voterewards.Standing{
				{UserID: v.PlatformID, Votes: 1, Total: v.Weight, ReachedAt: base},
				{UserID: v2.PlatformID, Votes: 1, Total: v2.Weight, ReachedAt: base},
			}
			assert.Equal(t, want, month())
			next := vote(1, base.Add(voterewards.VoteLifetime))
			ingest(t, s, nil, next)
			want[0] = voterewards.Standing{UserID: v.PlatformID, Votes: 2, Total: 2 * v.Weight, ReachedAt: next.CreatedAt}
			assert.Equal(t, want, month())
			// A process of an older release, still running, writes its
			// vote's month where version 5 no longer reads it: it must fail.
			_, err = pool.Exec(ctx, "INSERT INTO topgg.voter_months VALUES (0, 'x', 1, 1, 0)")
			pe, ok := errors.AsType[*pgconn.PgError](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, "42P01", pe.Code, "undefined_table")
		})
	}
}

// TestStatsNoUser: the ledger of user "" is misuse (a caller's field left
// empty), an error, not the zero Stats of a voter who never voted.
func TestStatsNoUser(t *testing.T) {
	s := open(t, pgstore.Config{})
	_, err := s.Stats(context.Background(), "")
	assert.ErrorIs(t, err, topgg.ErrNilArgument)
}

// TestFeedIdWithNewline: a voter id holding a newline (or any character
// text holds) reaches Follow: the notification is no longer split on one.
func TestFeedIdWithNewline(t *testing.T) {
	s := open(t, pgstore.Config{})
	got, resyncs := follow(t, s)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")
	v := vote(1, base)
	v.PlatformID = "3\n0000000000000000\"1,]"
	w := vote(2, base)
	require.Len(t, ingest(t, s, nil, v, w), 2)
	assert.Equal(t, v.Key(), receive(t, got, 5*time.Second, "the vote of an id holding a newline never reached Follow").Key())
	assert.Equal(t, w.Key(), receive(t, got, 5*time.Second, "the vote after it never reached Follow").Key())
}

// TestStoreErrorsHideCredentials: once connected, the Store's errors for a
// server gone (pgconn names the user of a failed dial, and its
// *pgconn.ConnectError holds the password in its Config) show neither, and
// hand no ConnectError to errors.As; nor does Ping's.
func TestStoreErrorsHideCredentials(t *testing.T) {
	ctx := context.Background()
	const user, password = "s3cr3tuser", "s3cr3tPa55word"
	var pool *pgxpool.Pool
	var s *pgstore.Store
	t.Run("connected", func(t *testing.T) { // the server is stopped when this ends
		srv := pgstoretest.Start(t)
		_, err := srv.Pool(t).Exec(ctx, `CREATE ROLE `+user+` LOGIN SUPERUSER PASSWORD '`+password+`'`)
		require.NoError(t, err)
		u, err := url.Parse(srv.URL(t))
		require.NoError(t, err)
		u.User = url.UserPassword(user, password)
		pool, err = pgstore.Connect(ctx, u.String())
		require.NoError(t, err)
		var l lease
		l.tok.Store(1)
		s, err = pgstore.Open(ctx, pool, pgstore.Config{})
		require.NoError(t, err)
		fenced(t, s, l.token)
	})
	require.NotNil(t, s, "the store was never opened")
	t.Cleanup(pool.Close)
	pool.Reset() // no idle connection left: the next call dials
	for name, call := range map[string]func() error{
		"Stats":       func() error { _, err := s.Stats(ctx, "u"); return err },
		"Leaderboard": func() error { _, err := s.Leaderboard(ctx, time.Time{}, 10); return err },
		"Load":        func() error { _, err := s.Load(ctx); return err },
		"Ingest": func() error {
			_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, []voterewards.Vote{vote(1, base)}, voterewards.DefaultStreakGrace)
			return err
		},
		"Delivered": func() error { return s.Delivered(ctx, vote(1, base), false) },
		"Reward": func() error {
			return s.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { return nil })(ctx, vote(1, base))
		},
		"Ping":     func() error { return s.Ping(ctx) },
		"LoadHash": func() error { _, err := s.LoadHash(ctx); return err },
		"SaveHash": func() error { return s.SaveHash(ctx, "h") },
		"Reminder": func() error { _, _, err := s.Reminder(ctx, "1"); return err },
		"Reminded": func() error { return s.Reminded(ctx, "1", "1@k") },
	} {
		err := call()
		require.Error(t, err, name)
		for _, shown := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			assert.NotContains(t, shown, "s3cr3t", "%s: the credentials in the error", name)
		}
		_, isConnect := errors.AsType[*pgconn.ConnectError](err)
		assert.False(t, isConnect, "%s: a ConnectError (its Config holds the password) reachable through errors.As", name)
	}
}

// TestStreakGraceForever: a StreakGrace of "forever" (the longest Duration)
// puts StreakUntil past April 2262, beyond Unix nanoseconds: the store keeps
// the last instant they hold, so the streak goes on (it wrapped around into
// 1677 and restarted every streak).
func TestStreakGraceForever(t *testing.T) {
	s := open(t, pgstore.Config{})
	const forever = time.Duration(math.MaxInt64)
	for i := range 3 {
		v := vote(1, base.Add(time.Duration(i)*30*24*time.Hour)) // a month apart: only the grace keeps the streak
		added, err := s.Ingest(context.Background(), nil, []voterewards.Vote{v}, forever)
		require.NoError(t, err)
		require.Len(t, added, 1)
		assert.Equal(t, i+1, added[0].Stats.Streak, "vote %d", i)
		st, err := s.Stats(context.Background(), v.PlatformID)
		require.NoError(t, err)
		assert.Equal(t, i+1, st.Streak, "vote %d, read back", i)
		assert.True(t, st.StreakUntil.After(base.Add(200*365*24*time.Hour)), "StreakUntil %v", st.StreakUntil)
	}
}

// TestIngestRefusesUnstorableIdsAlone: a vote whose id PostgreSQL's text
// cannot hold (a NUL byte, invalid UTF-8) is refused alone; the rest of the
// batch, and the checkpoint, go in (the whole batch failing on every retry
// would stall the poll behind it for good).
func TestIngestRefusesUnstorableIdsAlone(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgstore.Config{})
	nul, bad, good := vote(1, base), vote(2, base), vote(3, base)
	nul.PlatformID = "3\x0000000000000000001"
	bad.UserID = "7\xff"
	added, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, []voterewards.Vote{nul, bad, good}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.Len(t, added, 1)
	assert.Equal(t, good.Key(), added[0].Key())
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Seen, 1)
	assert.Equal(t, "c", snap.Checkpoint.Cursor)
}

// TestAncientVoteIsRefusedAlone: a vote's CreatedAt before 1678 does not fit
// UnixNano; the store refuses it alone (the Poller refuses it before, as any
// created_at before 2000), and never keeps a different time.
func TestAncientVoteIsRefusedAlone(t *testing.T) {
	s := open(t, pgstore.Config{})
	old := time.Date(1000, 6, 15, 0, 0, 0, 0, time.UTC)
	v := vote(1, old)
	added, err := s.Ingest(context.Background(), nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	if err != nil {
		require.ErrorIs(t, err, voterewards.ErrInvalidVote)
		return
	}
	assert.Empty(t, added, "refused alone (logged), not stored with another time")
	st, err := s.Stats(context.Background(), v.PlatformID)
	require.NoError(t, err)
	assert.Zero(t, st.Votes)
}

// TestRewardOfNilHandler: Reward(nil) and Expiry(nil) return nil, so that
// voterewards.New (OnReward is required) and the plugin refuse the misuse at
// once, rather than a handler failing every vote as it comes.
func TestRewardOfNilHandler(t *testing.T) {
	s := open(t, pgstore.Config{})
	assert.Nil(t, s.Reward(nil), "Reward(nil)")
	assert.Nil(t, s.Expiry(nil), "Expiry(nil)")
}

// TestCheckURL: the URLs Connect takes pass without a server; malformed
// ones fail with ErrBadURL and show neither the password nor the host.
func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"postgres://bot:hunter2@db.example:5432/bot?sslmode=require", "postgresql://db.example/bot", "postgres://127.0.0.1:1/x",
	} {
		assert.NoError(t, pgstore.CheckURL(ok), ok)
	}
	for _, bad := range []string{
		"", "mysql://bot:hunter2@db.example/bot", "host=db.example password=hunter2", "postgres://bot:hunter2@[::1/bot",
		"postgres://bot:hunter2@db.example:99999/bot", "postgres://bot:hunter2@db.example/bot?sslmode=maybe", "postgres:///bot",
	} {
		err := pgstore.CheckURL(bad)
		require.ErrorIs(t, err, pgstore.ErrBadURL, bad)
		assert.NotContains(t, err.Error(), "hunter2")
		assert.NotContains(t, err.Error(), "db.example")
	}
}

// TestConnectRefusesWhatCheckURLRefuses: one judge for one URL. A URL with
// user info but no host ("postgres://u:pw@/db") was ErrBadURL for CheckURL
// while Connect dialed the default unix socket; a socket named in ?host= is
// taken by both.
func TestConnectRefusesWhatCheckURLRefuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tcp := pg.URL(t)
	var dir string
	require.NoError(t, openPool(t, tcp).QueryRow(ctx, "SHOW unix_socket_directories").Scan(&dir))
	socket, err := url.Parse(tcp)
	require.NoError(t, err)
	socket.Host, socket.RawQuery = "", url.Values{"host": {dir}, "port": {socket.Port()}}.Encode()
	for _, tc := range []struct {
		url string
		bad bool
	}{
		{"postgres://u:pw@/db", true},
		{"postgres://u:pw@:5432/db", true},
		{"postgres:///db", true},
		{"postgresql://u@/db?sslmode=disable", true},
		{"mysql://u:pw@127.0.0.1/db", true},
		{socket.String(), false},
		{tcp, false},
	} {
		checked := pgstore.CheckURL(tc.url)
		pool, err := pgstore.Connect(ctx, tc.url)
		if pool != nil {
			pool.Close()
		}
		assert.Equal(t, tc.bad, errors.Is(checked, pgstore.ErrBadURL), "CheckURL(%s): %v", tc.url, checked)
		assert.Equal(t, tc.bad, errors.Is(err, pgstore.ErrBadURL), "Connect(%s): %v", tc.url, err)
		if !tc.bad {
			assert.NoError(t, err, tc.url)
		}
	}
}

// TestCommandHash: no hash saved reads as ""; SaveHash replaces it, and
// another process's Store on the database reads the last one saved.
func TestCommandHash(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	hash, err := s.LoadHash(ctx)
	require.NoError(t, err)
	assert.Empty(t, hash)
	require.NoError(t, s.SaveHash(ctx, "first"))
	require.NoError(t, s.SaveHash(ctx, "second"))
	other, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	hash, err = other.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, "second", hash)
}

// TestReminders: choices set by any process, records only by the current
// leader (a stale token is ErrFenced, none is refused before any write) and
// only for a user still opted in; on again keeps the record; another
// process starting finds the rows.
func TestReminders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pg.Pool(t)
	var a, b lease
	sa, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	sb, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	fenced(t, sa, a.token)
	fenced(t, sb, b.token)

	a.tok.Store(1)
	require.NoError(t, sb.SetReminder(ctx, "1", true), "a follower records an opt-in")
	require.NoError(t, sa.Reminded(ctx, "1", "1@k"))
	require.ErrorIs(t, sb.Reminded(ctx, "1", "1@b"), pgstore.ErrFenced, "not leading")
	require.NoError(t, sa.Reminded(ctx, "2", "2@k"), "not opted in: nothing recorded")
	require.NoError(t, sb.SetReminder(ctx, "1", true))
	check := func(s voterewards.ReminderStore, user string, wantOn bool, wantLast string) {
		t.Helper()
		on, last, err := s.Reminder(ctx, user)
		require.NoError(t, err)
		assert.Equal(t, wantOn, on, user)
		assert.Equal(t, wantLast, last, user)
	}
	check(sb, "1", true, "1@k")
	check(sb, "2", false, "")

	b.tok.Store(2) // b leads now: a's token is stale
	require.NoError(t, sb.Reminded(ctx, "1", "1@new"))
	require.ErrorIs(t, sa.Reminded(ctx, "1", "1@stale"), pgstore.ErrFenced)
	check(sb, "1", true, "1@new")
	sc, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	check(sc, "1", true, "1@new")
	require.NoError(t, sa.SetReminder(ctx, "1", false))
	check(sc, "1", false, "")
}

// TestRemindersAreTheSchemas: the opt-ins set through the State the plugin
// holds are the schema's: another Store on the same schema reads them, one
// on another schema does not.
func TestRemindersAreTheSchemas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pg.Pool(t)
	var st voterewards.State
	st, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "open_reminders"})
	require.NoError(t, err)
	require.NoError(t, st.SetReminder(ctx, "1", true))
	same, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "open_reminders"})
	require.NoError(t, err)
	on, _, err := same.Reminder(ctx, "1")
	require.NoError(t, err)
	assert.True(t, on, "the opt-in is not in the schema's table")
	other, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "other_reminders"})
	require.NoError(t, err)
	on, _, err = other.Reminder(ctx, "1")
	require.NoError(t, err)
	assert.False(t, on, "another schema's store holds the opt-in")
}
