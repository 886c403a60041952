package plugin_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// pointsBot is a bot's economy in its PostgreSQL database: one points row
// per voter, credited with each vote's weight in the reward's transaction.
// Its handler fails once for every vote after it wrote, so that a failed
// attempt's credit shows if it were not rolled back.
type pointsBot struct {
	pool *pgxpool.Pool
	mu   sync.Mutex
	seen map[string]bool // votes whose handler failed once
}

func newPointsBot(t *testing.T, pool *pgxpool.Pool) *pointsBot {
	t.Helper()
	_, err := pool.Exec(context.Background(), `CREATE TABLE points (user_id text PRIMARY KEY, points bigint NOT NULL)`)
	require.NoError(t, err)
	return &pointsBot{pool: pool, seen: map[string]bool{}}
}

// credit is the bot's transactional reward handler.
func (b *pointsBot) credit(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
	if _, err := tx.Exec(ctx, `INSERT INTO points (user_id, points) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET points = points.points + EXCLUDED.points`, v.PlatformID, v.Weight); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.seen[v.Key()] {
		b.seen[v.Key()] = true
		return errFirstAttempt
	}
	return nil
}

// errFirstAttempt is the error of a handler's first attempt: a service it
// calls failed after the credit was written.
var errFirstAttempt = errors.New("the shop's API answered 503")

// points returns every voter's points.
func (b *pointsBot) points(t *testing.T) map[string]int64 {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT user_id, points FROM points`)
	require.NoError(t, err)
	out := map[string]int64{}
	var user string
	var pts int64
	_, err = pgx.ForEachRow(rows, []any{&user, &pts}, func() error { out[user] = pts; return nil })
	require.NoError(t, err)
	return out
}

// weights is what points must hold once every vote of vs was rewarded once.
func weights(vs []topggtest.Vote) map[string]int64 {
	out := map[string]int64{}
	for _, v := range vs {
		out[v.PlatformID] += int64(v.Weight)
	}
	return out
}

// TestPostgresState runs the plugin on the bot's own PostgreSQL state, in
// one process and in a fleet, over one server.
func TestPostgresState(t *testing.T) {
	t.Parallel()
	pg := pgstoretest.Start(t)
	t.Run("one process", func(t *testing.T) {
		t.Parallel()
		testPostgresOneProcess(t, pg.Pool(t))
	})
	t.Run("fleet", func(t *testing.T) {
		t.Parallel()
		testPostgresFleet(t, pg.URL(t))
	})
}

// testPostgresOneProcess: given with WithState, the store is used as is
// (nothing kept in the world's state, given first), votes are rewarded through its
// transaction (a failed attempt's credit is rolled back: points exact), and
// Active knows them.
func testPostgresOneProcess(t *testing.T, pool *pgxpool.Pool) {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	bot := newPointsBot(t, pool)
	w := newWorld(t, worldSpec{})
	vs := votes(10)
	w.tg.AddVote(vs...)
	cfg := w.config()
	cfg.VoteRetryDelay = time.Millisecond
	p := w.plugin(cfg, plugin.WithState(store), plugin.WithRewardHandler(store.Reward(bot.credit)))
	w.start(p)
	w.open()
	want := weights(vs)
	require.Eventually(t, func() bool { return len(bot.points(t)) == len(want) }, wait, tick, "not every vote was rewarded")
	w.waitPolls(3)
	assert.Equal(t, want, bot.points(t), "a vote credited twice, or a failed attempt's credit kept")
	for _, v := range vs {
		assert.True(t, p.Active(v.PlatformID).Active, "Active does not know %s", v.PlatformID)
	}
	other, err := w.state().Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, other.Seen, "the plugin kept votes in a state beside the one it was given last")
	snap, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Pending)
}

// pgFleetProcess makes one process of a fleet whose votes are in the
// PostgreSQL database dsn: its own pool, Fleet and store (which New fences
// by the fleet's lease), a plugin attached to the given shards' sessions.
func (w *world) pgFleetProcess(redisURL, dsn string, shards []int, bot *pointsBot) (*plugin.Plugin, *fleet.Fleet, *pgstore.Store) {
	w.t.Helper()
	f, _ := newFleet(w.t, redisURL, fleet.Config{Bot: "app1", ShardCount: w.shards, LeaseTTL: time.Second,
		ReportEvery: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	store, err := pgstore.Open(context.Background(), openPool(w.t, dsn), pgstore.Config{})
	require.NoError(w.t, err)
	cfg := w.config()
	cfg.VoteRetryDelay = time.Millisecond
	p, err := plugin.New(w.client, cfg, plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithFleet(f),
		plugin.WithCommands([]*discordgo.ApplicationCommand{{Name: "vote", Description: "Vote"}}),
		plugin.WithState(store), plugin.WithRewardHandler(store.Reward(bot.credit)))
	require.NoError(w.t, err)
	var ss []*discordgo.Session
	for _, i := range shards {
		ss = append(ss, w.sessions[i])
	}
	require.NoError(w.t, p.Attach(ss...))
	return p, f, store
}

// testPostgresFleet: two processes share one PostgreSQL store and Redis
// (the lease). The leader rewards each vote once; both processes' Active
// learn every vote (the store's feed); the follower's leader writes are
// refused by the fence; when the leader stops, the other takes over and
// rewards the votes that come after, each once.
func testPostgresFleet(t *testing.T, dsn string) {
	ctx := context.Background()
	rds := redistest.Start(t)
	bot := newPointsBot(t, openPool(t, dsn))
	w := newWorld(t, worldSpec{shards: 2, perShard: 1})
	vs := votes(20)
	w.tg.AddVote(vs[:10]...)
	a, fa, sa := w.pgFleetProcess(rds.URL(), dsn, []int{0}, bot)
	b, fb, sb := w.pgFleetProcess(rds.URL(), dsn, []int{1}, bot)
	w.start(a)
	w.start(b)
	w.open()
	require.Eventually(t, func() bool { return len(bot.points(t)) == 10 }, wait, tick, "not every vote was rewarded")
	assert.Equal(t, weights(vs[:10]), bot.points(t))
	for _, v := range vs[:10] {
		for _, p := range []*plugin.Plugin{a, b} {
			assert.Eventually(t, func() bool { return p.Active(v.PlatformID).Active }, wait, tick)
		}
	}

	leader, follower, followerStore := a, b, sb
	if fb.Lease().State().Leader {
		leader, follower, followerStore = b, a, sa
	}
	require.True(t, fa.Lease().State().Leader != fb.Lease().State().Leader, "not one leader")
	snap, err := followerStore.Load(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, snap.Seen)
	err = followerStore.Delivered(ctx, snap.Seen[0], false)
	assert.ErrorIs(t, err, pgstore.ErrFenced, "a process that does not lead wrote the delivered mark")

	require.NoError(t, w.stop(leader))
	w.tg.AddVote(vs[10:]...)
	require.Eventually(t, func() bool { return len(bot.points(t)) == len(vs) }, 3*wait, tick,
		"the new leader did not reward the later votes")
	w.waitPolls(3)
	assert.Equal(t, weights(vs), bot.points(t), "a vote credited twice across the hand-over")
	for _, v := range vs[10:] {
		assert.Eventually(t, func() bool { return follower.Active(v.PlatformID).Active }, wait, tick)
	}
}

// openPool opens a pool on dsn (one per process of a test), closed at the
// test's cleanup.
func openPool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// TestPostgresStateChecks: New fences a PostgreSQL state given to a fleet
// by the fleet's lease (its leader writes are refused while this process
// does not lead), and leaves it unfenced in one process; the readiness
// checks ping the state ("state"), failing once its database cannot be
// reached.
func TestPostgresStateChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := pgstoretest.Start(t)
	w := newWorld(t, worldSpec{})
	quiet := plugin.WithLogger(slog.New(slog.DiscardHandler))
	f, _ := newFleet(t, redistest.Start(t).URL(), fleet.Config{Bot: "app1", ShardCount: 1, LeaseTTL: time.Second, Logger: slog.New(slog.DiscardHandler)})

	pool := pg.Pool(t)
	shared, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	_, err = plugin.New(w.client, w.config(), quiet, plugin.WithFleet(f), plugin.WithState(shared))
	require.NoError(t, err, "a fleet on a PostgreSQL state")
	assert.ErrorIs(t, shared.SaveHash(ctx, "h"), pgstore.ErrFenced, "a leader write of a process that never led")

	alone, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	p, err := plugin.New(w.client, w.config(), quiet, plugin.WithState(alone))
	require.NoError(t, err, "one process needs no fence")
	require.NoError(t, alone.SaveHash(ctx, "h"), "one process always leads")
	var check func(context.Context) error
	for _, c := range p.ReadinessChecks() {
		if c.Name == "state" {
			check = c.Func
		}
	}
	require.NotNil(t, check, "no state readiness check for a PostgreSQL state")
	assert.NoError(t, check(ctx))
	pool.Close()
	assert.Error(t, check(ctx), "the state's database cannot be reached: not ready")
}

// TestPostgresStateKeepsTheReminderOptIns: with a PostgreSQL state and
// reminders on, the opt-ins live in that database, beside the votes (the
// issue's "whichever backend is in use").
func TestPostgresStateKeepsTheReminderOptIns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := pgstoretest.Start(t)
	store, err := pgstore.Open(ctx, pg.Pool(t), pgstore.Config{})
	require.NoError(t, err)
	w := newWorld(t, worldSpec{})
	p, err := plugin.New(w.client, w.config(), plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithState(store),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: "1100000000000000001", Reminders: true}))
	require.NoError(t, err)

	const user = "300000000000000042"
	require.NoError(t, p.Perks().SetReminder(ctx, user, true))
	on, _, err := store.Reminder(ctx, user)
	require.NoError(t, err)
	assert.True(t, on, "the opt-in is not in PostgreSQL")
}

// TestPostgresLeaderPausedPastTheLeaseHoldsNoLockForTxTimeout: a fleet's
// lease (1 s) is shorter than the store's TxTimeout (the 15 s default), so a
// leader paused in a transaction would hold its votes' locks for TxTimeout,
// long after the next leader took over. Every transaction of the leader is
// limited (idle in transaction, lock waits) to what is left of its term.
func TestPostgresLeaderPausedPastTheLeaseHoldsNoLockForTxTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = time.Second
	pg := pgstoretest.Start(t)
	w := newWorld(t, worldSpec{})
	f, _ := newFleet(t, redistest.Start(t).URL(), fleet.Config{Bot: "app1", ShardCount: 1, LeaseTTL: lease, Logger: slog.New(slog.DiscardHandler)})
	store, err := pgstore.Open(ctx, pg.Pool(t), pgstore.Config{})
	require.NoError(t, err)
	limits := make(chan [2]time.Duration, 8)
	reward := store.Reward(func(ctx context.Context, tx pgx.Tx, _ voterewards.Vote) error {
		var idle, lock time.Duration
		err := tx.QueryRow(ctx, `SELECT current_setting('idle_in_transaction_session_timeout')::interval,
			current_setting('lock_timeout')::interval`).Scan(&idle, &lock)
		if err == nil {
			limits <- [2]time.Duration{idle, lock}
		}
		return err
	})
	w.tg.AddVote(votes(3)...)
	w.start(w.plugin(w.config(), plugin.WithFleet(f), plugin.WithState(store), plugin.WithRewardHandler(reward)))
	w.open()
	for range 3 {
		select {
		case l := <-limits:
			assert.Positive(t, l[0])
			assert.LessOrEqual(t, l[0], lease, "idle_in_transaction_session_timeout outlasts the lease")
			assert.LessOrEqual(t, l[1], lease, "lock_timeout outlasts the lease")
		case <-time.After(wait):
			t.Fatal("the votes were not rewarded")
		}
	}
}
