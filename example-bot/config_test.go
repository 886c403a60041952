package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// Distinctive tokens: any output that holds one of them leaked it.
const (
	unitDiscordToken = "unit-discord-token-9c41e7"
	unitTopggToken   = "unit-topgg-token-51ab0d"
)

// validEnv is a complete, valid environment whose URLs point at base.
func validEnv(base string) map[string]string {
	return map[string]string{
		"DISCORD_TOKEN":   unitDiscordToken,
		"TOPGG_TOKEN":     unitTopggToken,
		"TOPGG_API_URL":   base + "/api",
		"DISCORD_API_URL": base + "/api/v9/",
	}
}

// TestLoadConfigDefaults: with only the tokens set, every variable takes the
// default the README's table gives.
func TestLoadConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(map[string]string{
		"DISCORD_TOKEN": unitDiscordToken, "TOPGG_TOKEN": unitTopggToken,
	}))
	require.NoError(t, err)
	assert.Equal(t, config{Env: plugin.Env{
		DiscordToken:  plugin.NewCredential(unitDiscordToken),
		TopggToken:    plugin.NewCredential(unitTopggToken),
		TopggAPIURL:   "https://top.gg/api",
		DiscordAPIURL: "https://discord.com/api/v9",
		ShardCount:    1,
		StateDir:      "./topgg-state",
		FleetLease:    15 * time.Second,
		Config:        plugin.Config{}, // every zero field is its default, applied by plugin.New
	}}, cfg)
}

// TestLoadConfigEveryVariable: each variable of the bot sets its field.
func TestLoadConfigEveryVariable(t *testing.T) {
	t.Parallel()
	env := validEnv("http://127.0.0.1:1")
	maps.Copy(env, map[string]string{
		"TOPGG_AUTOPOST": "v0", "TOPGG_AUTOPOST_INTERVAL": "20m", "TOPGG_SYNC_COMMANDS": "false",
		"TOPGG_VOTE_POLL_INTERVAL": "0", "TOPGG_VOTE_LOOKBACK": "1h", "TOPGG_STATE_DIR": "/srv/state",
		"REWARD_GUILD_ID": "1200000000000000001", "REWARD_ROLE_ID": "1300000000000000001",
		"SHARD_COUNT": "4", "LOG_LEVEL": "DEBUG", "LOG_FORMAT": "json",
		"REDIS_URL": "rediss://:hunter2@redis.example:6380/1", "SHARD_IDS": "2-3,0", "TOPGG_FLEET_LEASE": "30s",
		"DATABASE_URL": "postgres://bot:hunter2@db.example:5432/bot?sslmode=require",
	})
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
	require.NoError(t, err)
	assert.Equal(t, config{Env: plugin.Env{
		DiscordToken: plugin.NewCredential(unitDiscordToken), TopggToken: plugin.NewCredential(unitTopggToken),
		TopggAPIURL: "http://127.0.0.1:1/api", DiscordAPIURL: "http://127.0.0.1:1/api/v9/",
		ShardCount: 4, LogLevel: slog.LevelDebug, LogFormat: "json",
		RedisURL: plugin.NewCredential("rediss://:hunter2@redis.example:6380/1"), ShardIDs: shards.IDs{0, 2, 3}, FleetLease: 30 * time.Second,
		DatabaseURL: plugin.NewCredential("postgres://bot:hunter2@db.example:5432/bot?sslmode=require"), StateDir: "/srv/state",
		Config: plugin.Config{
			Autopost: "v0", AutopostInterval: 20 * time.Minute, SyncCommands: new(false),
			VotePollInterval: new(time.Duration(0)), VoteLookback: time.Hour,
		},
	}, RewardGuildID: "1200000000000000001", RewardRoleID: "1300000000000000001"}, cfg)
}

// TestConfigErrorsExitAtOnce: a missing or malformed variable makes run exit
// with status 2 and exactly one line on stderr that names the variable, with no
// stack trace, no token, and before any network call.
func TestConfigErrorsExitAtOnce(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)

	notADir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notADir, nil, 0o600))
	for _, tc := range []struct {
		name     string
		set      map[string]string
		unset    []string
		variable string
		secrets  []string // parts of the value the message must not show
	}{
		{"missing discord token", nil, []string{"DISCORD_TOKEN"}, "DISCORD_TOKEN", nil},
		{"missing topgg token", nil, []string{"TOPGG_TOKEN"}, "TOPGG_TOKEN", nil},
		{"blank discord token", map[string]string{"DISCORD_TOKEN": "   "}, nil, "DISCORD_TOKEN", nil},
		{"discord token with its prefix", map[string]string{"DISCORD_TOKEN": "Bot " + unitDiscordToken}, nil, "DISCORD_TOKEN", nil},
		{"discord token with a control byte", map[string]string{"DISCORD_TOKEN": unitDiscordToken + "\x7f"}, nil, "DISCORD_TOKEN", nil},
		{"blank topgg token", map[string]string{"TOPGG_TOKEN": ""}, nil, "TOPGG_TOKEN", nil},
		{"relative topgg url", map[string]string{"TOPGG_API_URL": "top.gg/api"}, nil, "TOPGG_API_URL", nil},
		{"ftp discord url", map[string]string{"DISCORD_API_URL": "ftp://discord.com/api"}, nil, "DISCORD_API_URL", nil},
		{"autopost mode", map[string]string{"TOPGG_AUTOPOST": "v2"}, nil, "TOPGG_AUTOPOST", nil},
		{"autopost interval", map[string]string{"TOPGG_AUTOPOST_INTERVAL": "fast"}, nil, "TOPGG_AUTOPOST_INTERVAL", nil},
		{"autopost interval zero", map[string]string{"TOPGG_AUTOPOST_INTERVAL": "0s"}, nil, "TOPGG_AUTOPOST_INTERVAL", nil},
		{"autopost interval negative", map[string]string{"TOPGG_AUTOPOST_INTERVAL": "-1m"}, nil, "TOPGG_AUTOPOST_INTERVAL", nil},
		// Set but empty used to turn rewards off without a word.
		{"poll interval empty", map[string]string{"TOPGG_VOTE_POLL_INTERVAL": ""}, nil, "TOPGG_VOTE_POLL_INTERVAL", nil},
		{"shard count with a leading zero", map[string]string{"SHARD_COUNT": "010"}, nil, "SHARD_COUNT", nil},
		{"shard count hex", map[string]string{"SHARD_COUNT": "0x10"}, nil, "SHARD_COUNT", nil},
		{"shard count empty", map[string]string{"SHARD_COUNT": ""}, nil, "SHARD_COUNT", nil},
		{"guild id of 23 digits", map[string]string{"REWARD_GUILD_ID": "12345678901234567890123", "REWARD_ROLE_ID": "1300000000000000001"}, nil, "REWARD_GUILD_ID", nil},
		{"role id with a leading zero", map[string]string{"REWARD_GUILD_ID": "1200000000000000001", "REWARD_ROLE_ID": "01300000000000000001"}, nil, "REWARD_ROLE_ID", nil},
		{"log level empty", map[string]string{"LOG_LEVEL": ""}, nil, "LOG_LEVEL", nil},
		{"poll interval", map[string]string{"TOPGG_VOTE_POLL_INTERVAL": "-1m"}, nil, "TOPGG_VOTE_POLL_INTERVAL", nil},
		{"lookback", map[string]string{"TOPGG_VOTE_LOOKBACK": "10000h"}, nil, "TOPGG_VOTE_LOOKBACK", nil},
		{"sync commands", map[string]string{"TOPGG_SYNC_COMMANDS": "sure"}, nil, "TOPGG_SYNC_COMMANDS", nil},
		{"state dir", map[string]string{"TOPGG_STATE_DIR": ""}, nil, "TOPGG_STATE_DIR", nil},
		{"role without guild", map[string]string{"REWARD_ROLE_ID": "1300000000000000001"}, nil, "REWARD_ROLE_ID", nil},
		{"guild without role", map[string]string{"REWARD_GUILD_ID": "1200000000000000001"}, nil, "REWARD_ROLE_ID", nil},
		{"guild id", map[string]string{"REWARD_GUILD_ID": "my-guild", "REWARD_ROLE_ID": "1"}, nil, "REWARD_GUILD_ID", nil},
		{"role id", map[string]string{"REWARD_GUILD_ID": "1", "REWARD_ROLE_ID": "voter"}, nil, "REWARD_ROLE_ID", nil},
		{"shard count zero", map[string]string{"SHARD_COUNT": "0"}, nil, "SHARD_COUNT", nil},
		{"shard count word", map[string]string{"SHARD_COUNT": "two"}, nil, "SHARD_COUNT", nil},
		{"log level", map[string]string{"LOG_LEVEL": "loud"}, nil, "LOG_LEVEL", nil},
		{"log format", map[string]string{"LOG_FORMAT": "xml"}, nil, "LOG_FORMAT", nil},
		// The Top.gg client's own rules, named by variable, without the token.
		{"topgg token with a space", map[string]string{"TOPGG_TOKEN": unitTopggToken + " x"}, nil, "TOPGG_TOKEN", nil},
		{"topgg token with a control byte", map[string]string{"TOPGG_TOKEN": unitTopggToken + "\x01"}, nil, "TOPGG_TOKEN", nil},
		{"topgg url plain http", map[string]string{"TOPGG_API_URL": "http://example.com/api"}, nil, "TOPGG_API_URL", nil},
		{"topgg url user info", map[string]string{"TOPGG_API_URL": "https://ops:hunter2@top.gg/api"}, nil, "TOPGG_API_URL", []string{"ops", "hunter2"}},
		{"topgg url query", map[string]string{"TOPGG_API_URL": "https://top.gg/api?key=s3cr3t"}, nil, "TOPGG_API_URL", []string{"s3cr3t"}},
		// The same rule for the Discord token: plain http only to this machine.
		{"discord url plain http", map[string]string{"DISCORD_API_URL": "http://discord.example/api/v9"}, nil, "DISCORD_API_URL", nil},
		{"discord url plain http lookalike", map[string]string{"DISCORD_API_URL": "http://127.0.0.1.example.com/api/v9"}, nil, "DISCORD_API_URL", nil},
		{"discord url user info", map[string]string{"DISCORD_API_URL": "https://ops:hunter2@proxy.example/api/v9"}, nil, "DISCORD_API_URL", []string{"ops", "hunter2"}},
		{"discord url query", map[string]string{"DISCORD_API_URL": "https://proxy.example/api/v9?sig=s3cr3t"}, nil, "DISCORD_API_URL", []string{"s3cr3t"}},
		{"discord url unparsable", map[string]string{"DISCORD_API_URL": "https://ops:hunter2@[::1/api"}, nil, "DISCORD_API_URL", []string{"hunter2"}},
		{"relative discord url with password", map[string]string{"DISCORD_API_URL": "ops:hunter2@proxy/api"}, nil, "DISCORD_API_URL", []string{"hunter2"}},
		// The interval floors that protect the real service (none for a fake on this machine).
		{"poll interval below the floor", map[string]string{"TOPGG_VOTE_POLL_INTERVAL": "1ms", "TOPGG_API_URL": "https://top.gg/api"}, nil, "TOPGG_VOTE_POLL_INTERVAL", nil},
		{"autopost interval below the floor", map[string]string{"TOPGG_AUTOPOST_INTERVAL": "1m", "TOPGG_API_URL": "https://top.gg/api"}, nil, "TOPGG_AUTOPOST_INTERVAL", nil},
		{"topgg url with v1", map[string]string{"TOPGG_API_URL": "https://top.gg/api/v1"}, nil, "TOPGG_API_URL", nil},
		{"shard count huge", map[string]string{"SHARD_COUNT": "1000000000"}, nil, "SHARD_COUNT", nil},
		{"shard count one over", map[string]string{"SHARD_COUNT": "4097"}, nil, "SHARD_COUNT", nil},
		// Fleet mode: malformed values name their variable; the password never shows.
		{"redis url scheme", map[string]string{"REDIS_URL": "http://:hunter2@127.0.0.1:6379"}, nil, "REDIS_URL", []string{"hunter2"}},
		{"redis url unparsable", map[string]string{"REDIS_URL": "redis://:hunter2@[::1:6379"}, nil, "REDIS_URL", []string{"hunter2"}},
		{"redis url bad db", map[string]string{"REDIS_URL": "redis://:hunter2@127.0.0.1:6379/x"}, nil, "REDIS_URL", []string{"hunter2"}},
		{"redis url without host", map[string]string{"REDIS_URL": "redis://:hunter2@/0"}, nil, "REDIS_URL", []string{"hunter2"}},
		{"shard ids beyond shard count", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "4-6", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids overlapping", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "0-3,2-4", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids twice", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "1,1", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids backwards", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "3-1", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids syntax", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "0;2", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids empty part", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "0,,2", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids negative", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "-1", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids leading zero", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "01", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids above the bound", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "4096", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids huge range", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "0-1000000000", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard ids empty", map[string]string{"SHARD_IDS": "", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "SHARD_IDS", nil},
		{"shard subset without redis", map[string]string{"SHARD_COUNT": "6", "SHARD_IDS": "0-1"}, nil, "SHARD_IDS", nil},
		{"fleet lease word", map[string]string{"TOPGG_FLEET_LEASE": "long", "REDIS_URL": "redis://127.0.0.1:6379"}, nil, "TOPGG_FLEET_LEASE", nil},
		{"fleet lease too short", map[string]string{"TOPGG_FLEET_LEASE": "100ms", "REDIS_URL": "redis://:hunter2@127.0.0.1:6379"}, nil, "TOPGG_FLEET_LEASE", []string{"hunter2"}},
		// DATABASE_URL: a postgres:// URL; the password never shows.
		{"database url scheme", map[string]string{"DATABASE_URL": "mysql://bot:hunter2@db.example/bot"}, nil, "DATABASE_URL", []string{"hunter2", "db.example"}},
		{"database url dsn", map[string]string{"DATABASE_URL": "host=db.example password=hunter2"}, nil, "DATABASE_URL", []string{"hunter2"}},
		{"database url unparsable", map[string]string{"DATABASE_URL": "postgres://bot:hunter2@[::1/bot"}, nil, "DATABASE_URL", []string{"hunter2"}},
		{"database url bad port", map[string]string{"DATABASE_URL": "postgres://bot:hunter2@db.example:99999/bot"}, nil, "DATABASE_URL", []string{"hunter2", "db.example"}},
		{"database url bad option", map[string]string{"DATABASE_URL": "postgres://bot:hunter2@db.example/bot?sslmode=maybe"}, nil, "DATABASE_URL", []string{"hunter2", "db.example"}},
		{"database url empty", map[string]string{"DATABASE_URL": ""}, nil, "DATABASE_URL", nil},
		// The state directory is checked (on the local disk) when a job uses it.
		{"state dir cannot be made", map[string]string{"TOPGG_STATE_DIR": "/proc/nope"}, nil, "TOPGG_STATE_DIR", nil},
		{"state dir is a file", map[string]string{"TOPGG_STATE_DIR": notADir}, nil, "TOPGG_STATE_DIR", nil},
		{"state dir for command sync only", map[string]string{"TOPGG_STATE_DIR": "/proc/nope", "TOPGG_VOTE_POLL_INTERVAL": "0"}, nil, "TOPGG_STATE_DIR", nil},
		{"state dir for polling only", map[string]string{"TOPGG_STATE_DIR": notADir, "TOPGG_SYNC_COMMANDS": "false"}, nil, "TOPGG_STATE_DIR", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := validEnv(srv.URL)
			env["TOPGG_STATE_DIR"] = t.TempDir() // a run that gets as far as opening it has its own
			maps.Copy(env, tc.set)
			for _, k := range tc.unset {
				delete(env, k)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), nil, envconfig.MapLookuper(env), &stdout, &stderr)
			assert.Equal(t, exitConfig, code)
			out := stderr.String()
			assert.Equal(t, 1, strings.Count(out, "\n"), "exactly one line: %q", out)
			assert.True(t, strings.HasSuffix(out, "\n"))
			assert.True(t, strings.HasPrefix(out, "example-bot: configuration: "+tc.variable+": "), "%q", out)
			for _, bad := range append([]string{"goroutine ", "panic", ".go:", unitDiscordToken, unitTopggToken}, tc.secrets...) {
				assert.NotContains(t, out, bad)
			}
			assert.Empty(t, stdout.String())
		})
	}
	t.Cleanup(func() { assert.Zero(t, hits.Load(), "a configuration error made a network call") })
}

// TestConfigBaseURLs: https anywhere; plain http to this machine only (where
// a local fake or proxy runs); slashes as an operator may write them.
func TestConfigBaseURLs(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"https://discord.com/api/v9", "https://proxy.example:8443/discord/api/v9/",
		"http://127.0.0.1:5555/api/v9", "http://localhost:8080/api", "http://[::1]:80/api/", "http://127.0.0.2/api",
	} {
		env := validEnv("http://127.0.0.1:1")
		env["DISCORD_API_URL"], env["TOPGG_API_URL"] = u, u
		_, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
		assert.NoError(t, err, u)
	}
}

// TestConfigMessagesHideURLSecrets: a URL refused for its user info says
// so, naming the variable, without the user info, query or fragment, which
// may hold credentials.
func TestConfigMessagesHideURLSecrets(t *testing.T) {
	t.Parallel()
	for _, variable := range []string{"DISCORD_API_URL", "TOPGG_API_URL"} {
		env := validEnv("http://127.0.0.1:1")
		env[variable] = "http://ops:hunter2@proxy.example/api?sig=s3cr3t#anchor9"
		var stdout, stderr bytes.Buffer
		require.Equal(t, exitConfig, run(context.Background(), nil, envconfig.MapLookuper(env), &stdout, &stderr))
		out := stderr.String()
		assert.True(t, strings.HasPrefix(out, "example-bot: configuration: "+variable+": "), out)
		assert.Contains(t, out, "user info")
		for _, secret := range []string{"ops", "hunter2", "s3cr3t", "anchor9"} {
			assert.NotContains(t, out, secret)
		}
	}
}

// TestStateDirOnlyWhenUsed: TOPGG_STATE_DIR is created (with its parents)
// before any request when a job keeps state there, and neither created nor
// checked when none does (a bad one then exits 2 naming it:
// TestConfigErrorsExitAtOnce). A cancelled run stops before going online.
func TestStateDirOnlyWhenUsed(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runIn := func(dir string, set map[string]string) (int, string) {
		env := validEnv("http://127.0.0.1:1")
		env["TOPGG_STATE_DIR"] = dir
		maps.Copy(env, set)
		var stdout, stderr bytes.Buffer
		return run(ctx, nil, envconfig.MapLookuper(env), &stdout, &stderr), stderr.String()
	}
	dir := filepath.Join(t.TempDir(), "a", "state")
	code, out := runIn(dir, nil)
	require.Equal(t, exitOK, code, out)
	assert.DirExists(t, dir)

	none := map[string]string{"TOPGG_VOTE_POLL_INTERVAL": "0", "TOPGG_SYNC_COMMANDS": "false"}
	unused := filepath.Join(t.TempDir(), "unused")
	code, out = runIn(unused, none)
	require.Equal(t, exitOK, code, out)
	assert.NoDirExists(t, unused)
	code, out = runIn("/proc/nope", none)
	assert.Equal(t, exitOK, code, "no job keeps state: nothing to check: %s", out)
}

// TestBadFlagExits: an unknown flag is a usage error (status 2), not a run.
func TestBadFlagExits(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-no-such-flag"}, envconfig.MapLookuper(nil), &stdout, &stderr)
	assert.Equal(t, exitConfig, code)
	assert.Contains(t, stderr.String(), "-no-such-flag")
	assert.Contains(t, stderr.String(), "-demo", "the usage lists the flags")
}

// TestLogger: the bot logs at LOG_LEVEL in LOG_FORMAT (plugin.Env.Logger, whose
// test checks every level and format).
func TestLogger(t *testing.T) {
	t.Parallel()
	env := validEnv("http://127.0.0.1:1")
	env["LOG_LEVEL"], env["LOG_FORMAT"] = "warn", "json"
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
	require.NoError(t, err)
	var buf bytes.Buffer
	log := cfg.Logger(&buf)
	log.Info("hidden")
	log.Warn("shown", "n", 1)
	assert.NotContains(t, buf.String(), "hidden")
	assert.Contains(t, buf.String(), `"msg":"shown","n":1}`)
}

// TestConfigRedactsTokens: no fmt verb, flag or slog handler prints a token of
// the configuration (nor a password in a URL); a token that is set shows as
// [redacted], so a missing one is still told apart.
func TestConfigRedactsTokens(t *testing.T) {
	t.Parallel()
	env := validEnv("http://127.0.0.1:1")
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
	require.NoError(t, err)
	// The API URLs are no secrets: one with user info or a query is refused
	// (TestConfigMessagesHideURLSecrets), so a running bot holds none.
	cfg.RedisURL = plugin.NewCredential("rediss://ops:hunter2@redis.example:6380/0?s3cr3t=1")
	cfg.DatabaseURL = plugin.NewCredential("postgres://ops:hunter2@db.example/bot?s3cr3t=1")
	var outs []string
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%20v", "%d"} {
		outs = append(outs, fmt.Sprintf(format, cfg), fmt.Sprintf(format, &cfg),
			fmt.Sprintf(format, []config{cfg}), fmt.Sprintf(format, struct{ C config }{cfg}))
	}
	// Where fmt calls no method (an unexported field), the tokens show as addresses.
	hidden := fmt.Sprintf("%v %+v %#v", struct{ c config }{cfg}, struct{ c *config }{&cfg}, []any{struct{ c config }{cfg}})
	assert.NotContains(t, hidden, unitDiscordToken)
	assert.NotContains(t, hidden, unitTopggToken)
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("config", "cfg", cfg, "ptr", &cfg)
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "cfg", cfg)
	outs = append(outs, buf.String())
	for _, out := range outs {
		for _, secret := range []string{unitDiscordToken, unitTopggToken, "hunter2", "s3cr3t"} {
			assert.NotContains(t, out, secret)
		}
	}
	assert.Contains(t, fmt.Sprintf("%+v", cfg), "DiscordToken:[redacted]")
	assert.Contains(t, buf.String(), "TopggToken:[redacted]")
	assert.Contains(t, fmt.Sprintf("%+v", config{}), "DiscordToken: ", "an unset token shows empty")
	out, err := json.Marshal(cfg)
	require.NoError(t, err)
	assert.NotContains(t, string(out), unitDiscordToken)
}

// TestRedisURLOfClusterAndSentinelIsTaken: REDIS_URL may name a Redis Cluster
// or a master through Sentinel, as fleet.Open takes them (it exited 2 when
// the check accepted only redis:// and rediss://).
func TestRedisURLOfClusterAndSentinelIsTaken(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis+cluster://:hunter2@10.0.0.1:6379?addr=10.0.0.2:6379",
		"rediss+sentinel://10.0.0.1:26379/0?master_name=mymaster&password=hunter2",
	} {
		env := validEnv("http://127.0.0.1:1")
		maps.Copy(env, map[string]string{"REDIS_URL": u})
		cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
		require.NoError(t, err, "%s", "a "+u[:strings.Index(u, ":")]+" URL")
		assert.Equal(t, u, cfg.RedisURL.Reveal())
	}
}

const (
	unitWebhookSecret = "whs_unit_secret_5be1c0"
	unitWebhookAuth   = "unit-v0-auth-77d2"
)

// TestLoadConfigWebhook: the TOPGG_WEBHOOK_* variables reach plugin.Config,
// and polling stays on (at its default) to reconcile.
func TestLoadConfigWebhook(t *testing.T) {
	t.Parallel()
	env := validEnv("http://127.0.0.1:1")
	maps.Copy(env, map[string]string{
		"TOPGG_WEBHOOK_ADDR": ":8080", "TOPGG_WEBHOOK_PATH": "/hooks/topgg",
		"TOPGG_WEBHOOK_SECRET": unitWebhookSecret + ",whs_second", "TOPGG_WEBHOOK_AUTH": unitWebhookAuth,
	})
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
	require.NoError(t, err)
	assert.Equal(t, ":8080", cfg.Config.WebhookAddr)
	assert.Equal(t, "/hooks/topgg", cfg.Config.WebhookPath)
	assert.Equal(t, plugin.WebhookSecrets{unitWebhookSecret, "whs_second"}, cfg.Config.WebhookSecrets)
	assert.Equal(t, webhook.Secret(unitWebhookAuth), cfg.Config.WebhookAuth)
	assert.Nil(t, cfg.Config.VotePollInterval, "polling stays on at its default")
	for _, s := range []string{unitWebhookSecret, unitWebhookAuth} {
		assert.NotContains(t, fmt.Sprintf("%v %+v", cfg.Config, cfg.Config), s)
	}
}

// TestWebhookConfigErrorsExit2: each malformed webhook setting exits 2 with one
// line naming the variable, without the secrets.
func TestWebhookConfigErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		set      map[string]string
		variable string
	}{
		{"address without secret", map[string]string{"TOPGG_WEBHOOK_ADDR": ":8080"}, "TOPGG_WEBHOOK_SECRET"},
		{"address not host:port", map[string]string{"TOPGG_WEBHOOK_ADDR": "8080", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_ADDR"},
		{"address port too big", map[string]string{"TOPGG_WEBHOOK_ADDR": ":70000", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_ADDR"},
		{"address port a word", map[string]string{"TOPGG_WEBHOOK_ADDR": "localhost:http", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_ADDR"},
		{"address empty", map[string]string{"TOPGG_WEBHOOK_ADDR": "", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_ADDR"},
		{"path relative", map[string]string{"TOPGG_WEBHOOK_PATH": "hook", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_PATH"},
		{"secret empty", map[string]string{"TOPGG_WEBHOOK_SECRET": ""}, "TOPGG_WEBHOOK_SECRET"},
		{"secret with an empty item", map[string]string{"TOPGG_WEBHOOK_SECRET": unitWebhookSecret + ",,"}, "TOPGG_WEBHOOK_SECRET"},
		{"secret with a space", map[string]string{"TOPGG_WEBHOOK_SECRET": unitWebhookSecret + " x"}, "TOPGG_WEBHOOK_SECRET"},
		{"secret without whs_", map[string]string{"TOPGG_WEBHOOK_SECRET": unitWebhookSecret + "," + unitWebhookSecret[len("whs_"):]}, "TOPGG_WEBHOOK_SECRET"},
		{"auth with a newline", map[string]string{"TOPGG_WEBHOOK_AUTH": unitWebhookAuth + "\n"}, "TOPGG_WEBHOOK_AUTH"},
		{"poll off with webhooks", map[string]string{"TOPGG_WEBHOOK_SECRET": unitWebhookSecret, "TOPGG_VOTE_POLL_INTERVAL": "0"}, "TOPGG_VOTE_POLL_INTERVAL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := validEnv("http://127.0.0.1:1")
			maps.Copy(env, tc.set)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), nil, envconfig.MapLookuper(env), &stdout, &stderr)
			assert.Equal(t, exitConfig, code)
			out := stderr.String()
			assert.Equal(t, 1, strings.Count(out, "\n"), "exactly one line: %q", out)
			assert.True(t, strings.HasPrefix(out, "example-bot: configuration: "+tc.variable+": "), "%q", out)
			for _, s := range []string{unitWebhookSecret, unitWebhookAuth, "goroutine "} {
				assert.NotContains(t, out, s)
			}
			assert.Empty(t, stdout.String())
		})
	}
}

func TestCheckWebhookAddr(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", ":8080", "127.0.0.1:0", "[::1]:443", "example.com:65535"} {
		assert.NoError(t, plugin.CheckAddr(ok), ok)
	}
	for _, bad := range []string{"8080", ":65536", ":-1", ":08080", "a b:80", "http://x:80", "::1:80"} {
		assert.Error(t, plugin.CheckAddr(bad), bad)
	}
}

// TestMetricsAddr: METRICS_ADDR is unset by default (no server), a host:port
// when set; anything else exits 2 naming it, before any network call.
func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(validEnv("https://example.invalid")))
	require.NoError(t, err)
	assert.Empty(t, cfg.MetricsAddr)
	cfg.StateDir = t.TempDir()
	b, err := newBot(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	assert.Nil(t, b.reg, "no METRICS_ADDR, no server")

	for _, good := range []string{":9090", "127.0.0.1:0", "[::1]:9090"} {
		assert.NoError(t, plugin.CheckAddr(good), good)
	}
	for _, bad := range []string{"9090", "localhost", "http://127.0.0.1:9090", ":"} {
		env := validEnv("https://example.invalid")
		env["METRICS_ADDR"] = bad
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), nil, envconfig.MapLookuper(env), &stdout, &stderr)
		assert.Equal(t, exitConfig, code, bad)
		assert.True(t, strings.HasPrefix(stderr.String(), "example-bot: configuration: METRICS_ADDR: "), "%q", stderr.String())
	}
}

// TestMetricsAddrInUse: a METRICS_ADDR another process holds fails the
// start, naming the variable.
func TestMetricsAddrInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	cfg := config{MetricsAddr: l.Addr().String(), Env: plugin.Env{TopggToken: plugin.NewCredential("token"), TopggAPIURL: "https://top.gg/api"}}
	client, err := cfg.Client()
	require.NoError(t, err)
	p, err := plugin.New(client, plugin.Config{}, plugin.WithState(voterewards.NewMemoryStore()))
	require.NoError(t, err)
	b := &bot{cfg: cfg, log: slog.New(slog.DiscardHandler), reg: prometheus.NewRegistry(), plugin: p}
	require.ErrorContains(t, b.listenOps(context.Background()), "METRICS_ADDR")
}
