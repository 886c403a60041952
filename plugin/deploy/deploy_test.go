package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/plugin/deploy"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// env is a deployment's environment keeping its state in dir, as LoadEnv
// fills it without the variables of this test.
func env(dir string) plugin.Env {
	return plugin.Env{StateDir: dir, ShardCount: 1, FleetLease: 15 * time.Second}
}

// stateless is a Config whose jobs keep no state (autopost alone).
var stateless = plugin.Config{SyncCommands: new(false), VotePollInterval: new(time.Duration(0))}

// newPlugin makes a plugin with every job on over the deployment's options.
func newPlugin(t *testing.T, d *deploy.Deployment) (*plugin.Plugin, error) {
	t.Helper()
	client, err := topgg.New("token", topgg.WithBaseURL("http://127.0.0.1:1"))
	require.NoError(t, err)
	return plugin.New(client, plugin.Config{}, d.Options()...)
}

// open opens env's deployment for the test, closed at its end.
func open(t *testing.T, e plugin.Env) *deploy.Deployment {
	t.Helper()
	d, err := deploy.Open(t.Context(), e, "123456789012345678", nil)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	return d
}

// TestCheckStateDir: with neither REDIS_URL nor DATABASE_URL, Check creates
// the state directory (with its parents) and leaves it free; it is not
// touched when no job keeps state; an unusable one is a *ConfigError naming
// TOPGG_STATE_DIR, with the path once.
func TestCheckStateDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "state")
	require.NoError(t, deploy.Check(env(dir)))
	assert.DirExists(t, dir)
	st, err := boltstate.Open(dir)
	require.NoError(t, err, "Check left the state open")
	require.NoError(t, st.Close())

	unused := filepath.Join(t.TempDir(), "unused")
	off := env(unused)
	off.Config = stateless
	require.NoError(t, deploy.Check(off))
	assert.NoDirExists(t, unused)
	off.StateDir = "/proc/nope"
	assert.NoError(t, deploy.Check(off), "no job keeps state: nothing to check")

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for _, bad := range []string{"/proc/nope", file} {
		err := deploy.Check(env(bad))
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, bad)
		assert.Equal(t, "TOPGG_STATE_DIR", ce.Variable)
		assert.Equal(t, 1, strings.Count(err.Error(), bad), err.Error())
		_, err = deploy.Open(t.Context(), env(bad), "123456789012345678", nil)
		require.ErrorAs(t, err, &ce, bad)
		assert.Equal(t, "TOPGG_STATE_DIR", ce.Variable)
	}
}

// TestOpenDirectory: by default the state is the directory's, held while
// the deployment is open and free once it is closed; no fleet, no
// PostgreSQL; a plugin takes its options.
func TestOpenDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, err := deploy.Open(t.Context(), env(dir), "123456789012345678", nil)
	require.NoError(t, err)
	assert.IsType(t, &boltstate.State{}, d.State)
	assert.Nil(t, d.Fleet)
	assert.Nil(t, d.Postgres)
	assert.Nil(t, d.Pool)
	assert.Len(t, d.Options(), 1)
	_, err = newPlugin(t, d)
	require.NoError(t, err)
	_, err = boltstate.Open(dir)
	require.ErrorIs(t, err, boltstate.ErrLocked, "the deployment holds its state")

	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "a second Close closes nothing")
	st, err := boltstate.Open(dir)
	require.NoError(t, err, "free once closed")
	require.NoError(t, st.Close())
}

// TestOpenKeepsNoState: a deployment whose Config keeps no state opens none,
// and a plugin without a state takes its (no) options.
func TestOpenKeepsNoState(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "unused")
	e := env(dir)
	e.Config = stateless
	d := open(t, e)
	assert.Nil(t, d.State)
	assert.Empty(t, d.Options())
	assert.NoDirExists(t, dir)
	client, err := topgg.New("token", topgg.WithBaseURL("http://127.0.0.1:1"))
	require.NoError(t, err)
	_, err = plugin.New(client, stateless, d.Options()...)
	require.NoError(t, err)
}

// TestOpenRedis: REDIS_URL makes a fleet, and the state is the bot's in
// that Redis (no directory); the plugin takes both, its state fenced.
func TestOpenRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	dir := filepath.Join(t.TempDir(), "unused")
	e := env(dir)
	e.RedisURL = plugin.NewCredential(srv.URL())
	d := open(t, e)
	assert.IsType(t, &redisstate.State{}, d.State)
	require.NotNil(t, d.Fleet)
	assert.Nil(t, d.Postgres)
	assert.Len(t, d.Options(), 2)
	require.NoError(t, d.State.Ping(t.Context()))
	_, err := newPlugin(t, d)
	require.NoError(t, err)
	assert.ErrorIs(t, d.State.SaveHash(t.Context(), "h"), fleet.ErrNoFence, "a leader write of a process that never led")
	assert.NoDirExists(t, dir)
}

// TestOpenPostgres: DATABASE_URL keeps the state in PostgreSQL (Postgres,
// with its Pool for the bot's tables), one process's without REDIS_URL; in a
// fleet (REDIS_URL too) the plugin fences it by the fleet's lease.
func TestOpenPostgres(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "unused")

	e := env(dir)
	e.DatabaseURL = plugin.NewCredential(pg.URL(t))
	d := open(t, e)
	require.NotNil(t, d.Postgres)
	assert.Equal(t, voterewards.State(d.Postgres), d.State)
	require.NotNil(t, d.Pool)
	require.NoError(t, d.Pool.Ping(ctx))
	assert.Nil(t, d.Fleet)
	_, err := newPlugin(t, d)
	require.NoError(t, err)
	require.NoError(t, d.Postgres.SaveHash(ctx, "h"), "one process always leads")
	assert.NoDirExists(t, dir)

	e = env(dir)
	e.DatabaseURL = plugin.NewCredential(pg.URL(t))
	e.RedisURL = plugin.NewCredential(redistest.Start(t).URL())
	d = open(t, e)
	require.NotNil(t, d.Postgres)
	require.NotNil(t, d.Fleet)
	assert.Len(t, d.Options(), 2)
	_, err = newPlugin(t, d)
	require.NoError(t, err)
	assert.ErrorIs(t, d.Postgres.SaveHash(ctx, "h"), pgstore.ErrFenced, "a leader write of a process that never led")
	assert.NoDirExists(t, dir)
}

// TestBadURLs: a REDIS_URL or DATABASE_URL that does not parse is a
// *ConfigError naming the variable, from Check and from Open, and a
// database that cannot be reached fails Open naming DATABASE_URL; no error
// shows the password.
func TestBadURLs(t *testing.T) {
	t.Parallel()
	const password = "hunter2"
	for _, tc := range []struct {
		redis, db string
		variable  string
	}{
		{redis: "redis://u:" + password + "@127.0.0.1:notaport/0", variable: "REDIS_URL"},
		{redis: "http://u:" + password + "@127.0.0.1:6379/0", variable: "REDIS_URL"},
		{db: "postgres://u:" + password + "@127.0.0.1:notaport/db", variable: "DATABASE_URL"},
		{db: "mysql://u:" + password + "@127.0.0.1/db", variable: "DATABASE_URL"},
	} {
		e := env(t.TempDir())
		e.RedisURL, e.DatabaseURL = plugin.NewCredential(tc.redis), plugin.NewCredential(tc.db)
		for name, err := range map[string]error{
			"Check": deploy.Check(e),
			"Open":  openErr(t, e),
		} {
			var ce *topgg.ConfigError
			require.ErrorAs(t, err, &ce, "%s %+v", name, tc)
			assert.Equal(t, tc.variable, ce.Variable, name)
			assert.NotContains(t, err.Error(), password, name)
		}
	}

	e := env(t.TempDir())
	e.DatabaseURL = plugin.NewCredential("postgres://u:" + password + "@127.0.0.1:1/db?connect_timeout=5")
	err := openErr(t, e)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "DATABASE_URL")
	assert.NotContains(t, err.Error(), password)
}

// openErr is Open's error; a deployment it opened is closed.
func openErr(t *testing.T, e plugin.Env) error {
	t.Helper()
	d, err := deploy.Open(context.Background(), e, "123456789012345678", nil)
	if err == nil {
		assert.NoError(t, d.Close())
	}
	return err
}
