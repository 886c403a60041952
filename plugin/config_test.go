package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

func load(t *testing.T, env map[string]string) (plugin.Config, error) {
	t.Helper()
	return plugin.LoadConfig(context.Background(), envconfig.MapLookuper(env))
}

// TestLoadConfigEmpty: an empty environment leaves every field zero (nil): the
// defaults are New's, never written into the struct, so a zero Config and a
// loaded one mean the same.
func TestLoadConfigEmpty(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, nil)
	require.NoError(t, err)
	assert.Equal(t, plugin.Config{}, cfg)
}

// TestZeroConfigIsValid: plugin.Config{} built in code is valid and New
// accepts it, given a state.
func TestZeroConfigIsValid(t *testing.T) {
	t.Parallel()
	require.NoError(t, plugin.Config{}.Validate(nil))
	client, err := topgg.New("token")
	require.NoError(t, err)
	_, err = plugin.New(client, plugin.Config{}, plugin.WithLogger(slog.New(slog.DiscardHandler)),
		plugin.WithState(voterewards.NewMemoryStore()))
	require.NoError(t, err)
}

// TestNewNeedsAState: vote polling or command sync keep state, so New
// refuses them without WithState (topgg.ErrNotConfigured, naming the
// option); with both off no state is needed, and none is checked.
func TestNewNeedsAState(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	quiet := plugin.WithLogger(slog.New(slog.DiscardHandler))
	for _, cfg := range []plugin.Config{
		{},
		{VotePollInterval: new(time.Duration(0))},
		{SyncCommands: new(false)},
	} {
		require.True(t, cfg.KeepsState(), "%v", cfg)
		_, err := plugin.New(client, cfg, quiet)
		require.ErrorIs(t, err, topgg.ErrNotConfigured, "%v", cfg)
		assert.Contains(t, err.Error(), "WithState", "the error names the option")
	}
	off := plugin.Config{SyncCommands: new(false), VotePollInterval: new(time.Duration(0))}
	require.False(t, off.KeepsState())
	p, err := plugin.New(client, off, quiet)
	require.NoError(t, err, "nothing keeps state")
	for _, c := range p.ReadinessChecks() {
		assert.NotEqual(t, "state", c.Name, "a state check without a state")
	}
}

// TestLoadConfigEveryVariable: each variable sets its field, as written.
func TestLoadConfigEveryVariable(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, map[string]string{
		"TOPGG_AUTOPOST":               "v0",
		"TOPGG_AUTOPOST_INTERVAL":      "45m",
		"TOPGG_AUTOPOST_REFRESH":       "6h",
		"TOPGG_AUTOPOST_READY_TIMEOUT": "90s",
		"TOPGG_SYNC_COMMANDS":          "false",
		"TOPGG_VOTE_POLL_INTERVAL":     "90s",
		"TOPGG_VOTE_LOOKBACK":          "2h30m",
		"TOPGG_VOTE_CONCURRENCY":       "8",
		"TOPGG_VOTE_ATTEMPTS":          "3",
		"TOPGG_VOTE_RETRY_DELAY":       "2s",
		"TOPGG_VOTE_STOP_GRACE":        "4s",
		"TOPGG_WEBHOOK_PATH":           "/hooks/topgg",
	})
	require.NoError(t, err)
	assert.Equal(t, plugin.Config{
		Autopost:             "v0",
		AutopostInterval:     45 * time.Minute,
		AutopostRefresh:      6 * time.Hour,
		AutopostReadyTimeout: 90 * time.Second,
		SyncCommands:         new(false),
		VotePollInterval:     new(90 * time.Second),
		VoteLookback:         150 * time.Minute,
		VoteConcurrency:      8,
		VoteAttempts:         3,
		VoteRetryDelay:       2 * time.Second,
		VoteStopGrace:        4 * time.Second,
		WebhookPath:          "/hooks/topgg",
	}, cfg)
}

// TestLoadConfigTurnsJobsOff: "off", false and 0 turn the jobs off, the same
// values as in code.
func TestLoadConfigTurnsJobsOff(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, map[string]string{
		"TOPGG_AUTOPOST": "off", "TOPGG_SYNC_COMMANDS": "false", "TOPGG_VOTE_POLL_INTERVAL": "0",
	})
	require.NoError(t, err)
	assert.Equal(t, plugin.Config{
		Autopost: "off", SyncCommands: new(false), VotePollInterval: new(time.Duration(0)),
	}, cfg)
}

// TestLoadConfigMalformed: every malformed, empty or impossible value is a
// *ConfigError that names the variable (not the Go field) and says what is wrong.
func TestLoadConfigMalformed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		variable, value string
		problem         string // a piece of the message
	}{
		{"TOPGG_AUTOPOST", "v2", "is not one of v1, v0, off"},
		{"TOPGG_AUTOPOST", "", "set but empty"},
		{"TOPGG_AUTOPOST_INTERVAL", "soon", "the value is not a duration"},
		{"TOPGG_AUTOPOST_INTERVAL", "30", "the value is not a duration"},
		{"TOPGG_AUTOPOST_INTERVAL", "-5m", "negative"},
		{"TOPGG_AUTOPOST_INTERVAL", "", "set but empty"},
		{"TOPGG_AUTOPOST_INTERVAL", "0s", "unset the variable for the default"},
		{"TOPGG_VOTE_ATTEMPTS", "0", "unset the variable for the default"},
		{"TOPGG_AUTOPOST_REFRESH", "-1h", "negative"},
		{"TOPGG_AUTOPOST_READY_TIMEOUT", "later", "not a duration"},
		{"TOPGG_VOTE_POLL_INTERVAL", "often", "the value is not a duration"},
		{"TOPGG_VOTE_POLL_INTERVAL", "-1s", "negative"},
		// It used to turn rewards off without a word.
		{"TOPGG_VOTE_POLL_INTERVAL", "", "set but empty"},
		{"TOPGG_VOTE_LOOKBACK", "forever", "the value is not a duration"},
		{"TOPGG_VOTE_LOOKBACK", "9000h", "more than one year"},
		{"TOPGG_VOTE_LOOKBACK", "", "set but empty"},
		{"TOPGG_VOTE_CONCURRENCY", "010", "leading zero"},
		{"TOPGG_VOTE_CONCURRENCY", "0x10", "not a decimal"},
		{"TOPGG_VOTE_CONCURRENCY", "1_000", "not a decimal"},
		{"TOPGG_VOTE_CONCURRENCY", "+4", "not a decimal"},
		{"TOPGG_VOTE_CONCURRENCY", " 4", "not a decimal"},
		{"TOPGG_VOTE_CONCURRENCY", "-4", "negative"},
		{"TOPGG_VOTE_CONCURRENCY", "99999999999999999999999", "out of range"},
		{"TOPGG_VOTE_ATTEMPTS", "-1", "negative"},
		{"TOPGG_VOTE_RETRY_DELAY", "-1s", "negative"},
		{"TOPGG_VOTE_STOP_GRACE", "-1s", "negative"},
		{"TOPGG_SYNC_COMMANDS", "maybe", "the value is not true, false, 1 or 0"},
		{"TOPGG_SYNC_COMMANDS", "", "set but empty"},
	} {
		t.Run(tc.variable+"="+tc.value, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, map[string]string{tc.variable: tc.value})
			var ce *topgg.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.variable, ce.Variable)
			assert.Contains(t, ce.Problem, tc.problem)
			assert.Equal(t, tc.variable+": "+ce.Problem, err.Error())
		})
	}
}

// TestValidateNamesFields: a bad value set in code is reported with its Go
// field, not an environment variable the caller never set.
func TestValidateNamesFields(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	for _, tc := range []struct {
		cfg   plugin.Config
		field string
	}{
		{plugin.Config{Autopost: "sometimes"}, "plugin.Config.Autopost"},
		{plugin.Config{AutopostInterval: -time.Minute}, "plugin.Config.AutopostInterval"},
		{plugin.Config{AutopostRefresh: -time.Minute}, "plugin.Config.AutopostRefresh"},
		{plugin.Config{AutopostReadyTimeout: -time.Minute}, "plugin.Config.AutopostReadyTimeout"},
		{plugin.Config{VotePollInterval: new(-time.Second)}, "plugin.Config.VotePollInterval"},
		{plugin.Config{VoteLookback: 400 * 24 * time.Hour}, "plugin.Config.VoteLookback"},
		{plugin.Config{VoteConcurrency: -1}, "plugin.Config.VoteConcurrency"},
		{plugin.Config{VoteAttempts: -1}, "plugin.Config.VoteAttempts"},
		{plugin.Config{VoteRetryDelay: -1}, "plugin.Config.VoteRetryDelay"},
		{plugin.Config{VoteStopGrace: -1}, "plugin.Config.VoteStopGrace"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			t.Parallel()
			_, err := plugin.New(client, tc.cfg)
			var ce *topgg.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
			assert.Empty(t, ce.Variable)
			assert.Contains(t, err.Error(), tc.field+": ")
			assert.NotContains(t, err.Error(), "TOPGG_")
		})
	}
}

// botConfig is a bot's own configuration embedding plugin.Config, as the
// package comment suggests.
type botConfig struct {
	Token  string `env:"BOT_TOKEN, required"`
	Shards int    `env:"SHARDS, default=1"`
	Plugin plugin.Config
}

// TestLoadEnvEmbedded: LoadEnv fills a bot's struct that embeds Config, checks
// the embedded Config, and names the variable of a bad value, also inside it.
func TestLoadEnvEmbedded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	var c botConfig
	require.NoError(t, plugin.LoadEnv(ctx, &c, envconfig.MapLookuper(map[string]string{
		"BOT_TOKEN": "x", "TOPGG_AUTOPOST": "off",
	})))
	assert.Equal(t, botConfig{Token: "x", Shards: 1, Plugin: plugin.Config{Autopost: "off"}}, c)

	for _, tc := range []struct {
		env      map[string]string
		variable string
		problem  string
	}{
		{map[string]string{}, "BOT_TOKEN", "is required but not set"},
		{map[string]string{"BOT_TOKEN": "x", "SHARDS": "two"}, "SHARDS", "the value is not a decimal"},
		{map[string]string{"BOT_TOKEN": "x", "SHARDS": "010"}, "SHARDS", "leading zero"},
		{map[string]string{"BOT_TOKEN": "x", "TOPGG_VOTE_LOOKBACK": "long"}, "TOPGG_VOTE_LOOKBACK", "the value is not a duration"},
		{map[string]string{"BOT_TOKEN": "x", "TOPGG_VOTE_LOOKBACK": "9000h"}, "TOPGG_VOTE_LOOKBACK", "more than one year"},
		{map[string]string{"BOT_TOKEN": "x", "TOPGG_SYNC_COMMANDS": "yes please"}, "TOPGG_SYNC_COMMANDS", "the value is not true, false, 1 or 0"},
	} {
		var c botConfig
		err := plugin.LoadEnv(ctx, &c, envconfig.MapLookuper(tc.env))
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, "%v", tc.env)
		assert.Equal(t, tc.variable, ce.Variable)
		assert.Contains(t, ce.Problem, tc.problem)
		assert.NotContains(t, err.Error(), "Plugin", "the Go field path is not shown")
	}
}

// TestLoadEnvCodeWins: values set in code before LoadEnv, false and 0 included,
// are kept over the environment (whose variables for them are not even read);
// the fields left zero come from the environment.
func TestLoadEnvCodeWins(t *testing.T) {
	t.Parallel()
	cfg := plugin.Config{
		Autopost: "v0", AutopostInterval: 20 * time.Minute, WebhookPath: "/from/code",
		SyncCommands: new(false), VotePollInterval: new(time.Duration(0)),
	}
	require.NoError(t, plugin.LoadEnv(context.Background(), &cfg, envconfig.MapLookuper(map[string]string{
		"TOPGG_AUTOPOST":           "v2", // malformed, but not read
		"TOPGG_AUTOPOST_INTERVAL":  "1h",
		"TOPGG_WEBHOOK_PATH":       "/from/env",
		"TOPGG_SYNC_COMMANDS":      "true",
		"TOPGG_VOTE_POLL_INTERVAL": "5m",
		"TOPGG_VOTE_LOOKBACK":      "1h",
	})))
	assert.Equal(t, plugin.Config{
		Autopost:         "v0",
		AutopostInterval: 20 * time.Minute,
		SyncCommands:     new(false),
		VotePollInterval: new(time.Duration(0)),
		VoteLookback:     time.Hour,
		WebhookPath:      "/from/code",
	}, cfg)
}

// secretConfig has token- and secret-like variables of types whose parsing
// can fail.
type secretConfig struct {
	APIToken      int           `env:"SERVICE_TOKEN"`
	WebhookSecret time.Duration `env:"WEBHOOK_SECRET"`
	RedisPassword bool          `env:"REDIS_PASSWORD"`
}

// TestLoadEnvNeverEchoesSecrets: a malformed token-like value is named by its
// variable, and its value appears nowhere in the error.
func TestLoadEnvNeverEchoesSecrets(t *testing.T) {
	t.Parallel()
	for _, variable := range []string{"SERVICE_TOKEN", "WEBHOOK_SECRET", "REDIS_PASSWORD"} {
		const value = "tok-3f9a77c1-do-not-print"
		var c secretConfig
		err := plugin.LoadEnv(context.Background(), &c, envconfig.MapLookuper(map[string]string{variable: value}))
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, variable, ce.Variable)
		assert.NotContains(t, err.Error(), "3f9a77c1")
		assert.NotContains(t, fmt.Sprintf("%+v %#v", err, ce), "3f9a77c1")
	}
}

// redisURL decodes itself as url.Parse does: its error quotes the whole URL.
type redisURL struct{ u *url.URL }

func (r *redisURL) UnmarshalText(b []byte) (err error) {
	r.u, err = url.Parse(string(b))
	return err
}

// quotedList decodes a comma-separated list and quotes the item it refuses.
type quotedList []string

func (l *quotedList) EnvDecode(v string) error {
	for item := range strings.SplitSeq(v, ",") {
		if item == "" {
			return errors.New("an item is empty")
		}
		if len(item) > 8 {
			return fmt.Errorf("item %q is too long", item)
		}
	}
	return nil
}

// TestLoadEnvQuotesNoValueOfTheBot: a bot's own variables may hold secrets
// whatever their names (a Redis URL with a password, an API key): a refused
// value is never quoted, nor is a part of it in its decoder's reason, which
// is kept when it shows none. The values of Config's own non-secret fields
// are quoted (they help, and hold no secret), and a malformed
// TOPGG_WEBHOOK_SECRET says which item is wrong and why.
func TestLoadEnvQuotesNoValueOfTheBot(t *testing.T) {
	t.Parallel()
	type botConfig struct {
		RedisURL redisURL      `env:"REDIS_URL"`
		APIKey   int           `env:"API_KEY"`
		Debug    bool          `env:"DEBUG_KEY"`
		Wait     time.Duration `env:"KEY_WAIT"`
		Keys     quotedList    `env:"KEYS"`
		Plugin   plugin.Config
	}
	for _, tc := range []struct {
		variable, value, problem string
	}{
		{"REDIS_URL", "redis://u:redispass@h:bad/0", "is malformed (the decoder's reason is not shown"},
		{"REDIS_URL", "redis://:redispass@h:6379/0\x7f", "is malformed: parse the value: net/url: invalid control character in URL"},
		{"API_KEY", "redispassKEY", "the value is not a decimal whole number"},
		{"API_KEY", "0123456", "the value has a leading zero"},
		{"DEBUG_KEY", "redispass", "the value is not true, false, 1 or 0"},
		{"KEY_WAIT", "redispass", "the value is not a duration"},
		{"KEYS", "ok,redispassword", "is malformed (the decoder's reason is not shown"},
		{"TOPGG_WEBHOOK_SECRET", "whs_redispass, redispass", "the value is malformed: secret 2 of 2: does not start with whs_"},
	} {
		var c botConfig
		err := plugin.LoadEnv(context.Background(), &c, envconfig.MapLookuper(map[string]string{tc.variable: tc.value}))
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, tc.value)
		assert.Equal(t, tc.variable, ce.Variable)
		assert.Contains(t, ce.Problem, tc.problem, tc.value)
		for _, shown := range []string{err.Error(), fmt.Sprintf("%+v %#v %q %x", err, ce, err, err)} {
			assert.NotContains(t, shown, "redispass", tc.value)
			assert.NotContains(t, shown, fmt.Sprintf("%x", "redispass"), tc.value)
		}
	}
	// A decoder's reason that shows no part of the value is kept.
	var c botConfig
	err := plugin.LoadEnv(context.Background(), &c, envconfig.MapLookuper(map[string]string{"KEYS": "abcd,,efgh"}))
	require.ErrorContains(t, err, "KEYS: is malformed: an item is empty")
	// Nor is a value of Config's own: a secret may be set in the wrong variable.
	for _, variable := range []string{"TOPGG_VOTE_LOOKBACK", "TOPGG_AUTOPOST", "TOPGG_WEBHOOK_PATH", "TOPGG_SYNC_COMMANDS", "TOPGG_VOTE_CONCURRENCY"} {
		var c botConfig
		err = plugin.LoadEnv(context.Background(), &c, envconfig.MapLookuper(map[string]string{variable: "redispass"}))
		require.ErrorContains(t, err, variable+":")
		require.NotContains(t, err.Error(), "redispass")
	}
}

// TestLoadEnvBadTarget: a target LoadEnv cannot fill is an error, not a
// *ConfigError (no variable is to blame).
func TestLoadEnvBadTarget(t *testing.T) {
	t.Parallel()
	for _, target := range []any{plugin.Config{}, nil, (*plugin.Config)(nil), new(int), &struct {
		F float64 `env:"F"`
	}{}, &struct {
		F int `env:"F, prefix=X"`
	}{}, &struct {
		S struct {
			F int `env:"F"`
		} `env:", prefix=X_"`
	}{}} {
		err := plugin.LoadEnv(context.Background(), target, envconfig.MapLookuper(map[string]string{"F": "1"}))
		require.Error(t, err, "%T", target)
		var ce *topgg.ConfigError
		assert.False(t, errors.As(err, &ce), "%T", target)
	}
}

// TestLoadConfigProcessEnvironment: a nil lookuper reads the process
// environment. It cannot run in parallel (t.Setenv).
func TestLoadConfigProcessEnvironment(t *testing.T) {
	t.Setenv("TOPGG_AUTOPOST", "off")
	t.Setenv("TOPGG_VOTE_POLL_INTERVAL", "2m")
	cfg, err := plugin.LoadConfig(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "off", cfg.Autopost)
	assert.Equal(t, new(2*time.Minute), cfg.VotePollInterval)

	t.Setenv("TOPGG_VOTE_POLL_INTERVAL", "sometimes")
	_, err = plugin.LoadConfig(context.Background(), nil)
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_VOTE_POLL_INTERVAL", ce.Variable)
}

// TestNewMisuse: a nil client, a nil option and an option given nil are
// topgg.ErrNilArgument.
func TestNewMisuse(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	_, err = plugin.New(nil, plugin.Config{})
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	for i, opt := range []plugin.Option{
		nil, plugin.WithLogger(nil), plugin.WithRewardHandler(nil), plugin.WithExpiryHandler(nil),
		plugin.WithGiveUpHandler(nil), plugin.WithOnPost(nil), plugin.WithCommandSyncHandler(nil),
		plugin.WithCommands(nil), plugin.WithState(nil), plugin.WithState((*boltstate.State)(nil)),
	} {
		_, err := plugin.New(client, plugin.Config{}, opt)
		require.ErrorIs(t, err, topgg.ErrNilArgument, "option %d", i)
	}
}

// TestNewIntervalFloors: intervals that would flood the real service are a
// *ConfigError at New (a 1 ms poll used to be a warning, and sent 1,355
// requests in 2 s); the floors themselves, off (0) and the defaults are
// accepted, and a client of a fake on this machine has no floor.
func TestNewIntervalFloors(t *testing.T) {
	t.Parallel()
	remote, err := topgg.New("token")
	require.NoError(t, err)
	local, err := topgg.New("token", topgg.WithBaseURL("http://127.0.0.1:1/api"))
	require.NoError(t, err)
	for _, tc := range []struct {
		cfg   plugin.Config
		field string // "": accepted
	}{
		{plugin.Config{VotePollInterval: new(time.Millisecond)}, "plugin.Config.VotePollInterval"},
		{plugin.Config{VotePollInterval: new(9999 * time.Millisecond)}, "plugin.Config.VotePollInterval"},
		{plugin.Config{AutopostInterval: time.Minute}, "plugin.Config.AutopostInterval"},
		{plugin.Config{VotePollInterval: new(voterewards.MinInterval), AutopostInterval: autopost.MinInterval}, ""},
		{plugin.Config{VotePollInterval: new(time.Duration(0))}, ""},
		{plugin.Config{}, ""},
	} {
		_, err := plugin.New(remote, tc.cfg, plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithState(voterewards.NewMemoryStore()))
		if tc.field == "" {
			require.NoError(t, err, "%v", tc.cfg)
		} else {
			var ce *topgg.ConfigError
			require.ErrorAs(t, err, &ce, "%v", tc.cfg)
			assert.Equal(t, tc.field, ce.Field)
			assert.Contains(t, err.Error(), "is below")
			assert.Equal(t, 1, strings.Count(err.Error(), "plugin"), err.Error())
		}
		_, err = plugin.New(local, tc.cfg, plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithState(voterewards.NewMemoryStore()))
		require.NoError(t, err, "no floor for a fake on this machine: %v", tc.cfg)
	}
}

// TestNewValidatesCommands: a definition Discord would refuse is an error at
// New, where it is given (it used to be a log line once the sync ran, and
// the bot ran with no commands listed).
func TestNewValidatesCommands(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	_, err = plugin.New(client, plugin.Config{}, plugin.WithCommands([]*discordgo.ApplicationCommand{
		{Name: "vote", Description: "Vote"}, {Name: "Ping", Description: "Pong"},
	}))
	var ve *topgg.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "commands[1].name", ve.Field)
	assert.True(t, strings.HasPrefix(err.Error(), "plugin: WithCommands: "), err.Error())
}

// TestLoadConfigNamesMissingVariable: a rule that ties two settings names the
// variable of the one left unset (the operator sets it), not a Go field.
func TestLoadConfigNamesMissingVariable(t *testing.T) {
	t.Parallel()
	_, err := load(t, map[string]string{"TOPGG_WEBHOOK_ADDR": ":8080"})
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_WEBHOOK_SECRET", ce.Variable)
	assert.True(t, strings.HasPrefix(err.Error(), "TOPGG_WEBHOOK_SECRET: is empty"), err.Error())

	// Set in code, the field is named as such.
	cfg := plugin.Config{WebhookAddr: ":8080", VotePollInterval: new(time.Duration(0)), WebhookAuth: "auth"}
	err = plugin.LoadEnv(context.Background(), &cfg, envconfig.MapLookuper(nil))
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "plugin.Config.VotePollInterval", ce.Field)
	assert.Empty(t, ce.Variable)
}

// structToken is a struct type that decodes itself, as a bot's secret
// holder may be; go-envconfig decodes such types apart from the others.
type structToken struct{ p *string }

func (s *structToken) EnvDecode(v string) error {
	if strings.HasPrefix(v, "Bot ") {
		return fmt.Errorf("%q starts with Bot", v)
	}
	s.p = &v
	return nil
}

// TestLoadEnvStructDecoder: a struct type that decodes itself follows the
// same rules as the others: set but empty refused, a value set in code kept,
// a decoder's refusal named by variable, a secret's value never quoted.
func TestLoadEnvStructDecoder(t *testing.T) {
	t.Parallel()
	type target struct {
		Token structToken `env:"BOT_TOKEN"`
		Other structToken `env:"OTHER, required"`
	}
	load := func(c *target, env map[string]string) error {
		return plugin.LoadEnv(context.Background(), c, envconfig.MapLookuper(env))
	}
	var c target
	require.NoError(t, load(&c, map[string]string{"BOT_TOKEN": "abc", "OTHER": "x"}))
	assert.Equal(t, "abc", *c.Token.p)

	code := "from-code"
	c = target{Token: structToken{&code}}
	require.NoError(t, load(&c, map[string]string{"BOT_TOKEN": "from-env", "OTHER": "x"}))
	assert.Equal(t, "from-code", *c.Token.p, "a value set in code is kept")

	for _, tc := range []struct {
		env      map[string]string
		variable string
		problem  string
	}{
		{map[string]string{"BOT_TOKEN": "", "OTHER": "x"}, "BOT_TOKEN", "is set but empty"},
		{map[string]string{"BOT_TOKEN": "Bot s3cr3t", "OTHER": "x"}, "BOT_TOKEN", "is malformed"},
		{map[string]string{"BOT_TOKEN": "x", "OTHER": "Bot s3cr3t"}, "OTHER", "is malformed: the value starts with Bot"},
		{map[string]string{"BOT_TOKEN": "x"}, "OTHER", "is required but not set"},
	} {
		var c target
		err := load(&c, tc.env)
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, "%v", tc.env)
		assert.Equal(t, tc.variable, ce.Variable)
		assert.Contains(t, ce.Problem, tc.problem)
		assert.NotContains(t, err.Error(), "s3cr3t")
	}
}

// oneOf decodes a name and quotes the one it refuses, then names its own words.
type oneOf string

func (o *oneOf) EnvDecode(v string) error {
	return fmt.Errorf("name %q is not one of the known names: e, ed", v)
}

// TestLoadEnvKeepsTheDecodersWords: a short refused value is taken out of
// its decoder's reason where it stands alone, not out of every word ("e"
// made "nam[the value] ... on[the value] of th[the value] known nam[the value]s").
func TestLoadEnvKeepsTheDecodersWords(t *testing.T) {
	t.Parallel()
	var c struct {
		Name oneOf `env:"NAME"`
	}
	err := plugin.LoadEnv(context.Background(), &c, envconfig.MapLookuper(map[string]string{"NAME": "e"}))
	require.ErrorContains(t, err, "NAME: is malformed: name the value is not one of the known names: the value, ed")
}

// TestNewRefusesAHandlerItsJobNeverCalls: a handler option whose job the
// Config turns off (a reward handler with vote polling off, an OnPost with
// autopost off, a sync handler with command sync off) is a ConfigError
// naming the field and the option, as WithVoterPerks already is.
func TestNewRefusesAHandlerItsJobNeverCalls(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	handler := func(context.Context, voterewards.Vote) error { return nil }
	pollOff := plugin.Config{VotePollInterval: new(time.Duration(0))}
	for _, c := range []struct {
		option plugin.Option
		name   string
		cfg    plugin.Config
		field  string
	}{
		{plugin.WithRewardHandler(handler), "WithRewardHandler", pollOff, "plugin.Config.VotePollInterval"},
		{plugin.WithExpiryHandler(handler), "WithExpiryHandler", pollOff, "plugin.Config.VotePollInterval"},
		{plugin.WithGiveUpHandler(func(voterewards.Vote, error) {}), "WithGiveUpHandler", pollOff, "plugin.Config.VotePollInterval"},
		{plugin.WithOnPost(func(autopost.Result) {}), "WithOnPost", plugin.Config{Autopost: "off"}, "plugin.Config.Autopost"},
		{plugin.WithCommandSyncHandler(func(context.Context, commands.Result, error) {}), "WithCommandSyncHandler",
			plugin.Config{SyncCommands: new(false)}, "plugin.Config.SyncCommands"},
	} {
		_, err := plugin.New(w.client, c.cfg, plugin.WithState(w.state()), c.option)
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, c.name)
		assert.Equal(t, c.field, ce.Field, c.name)
		assert.Contains(t, err.Error(), c.name+" would never be called")
	}
	_, err := plugin.New(w.client, plugin.Config{}, plugin.WithState(w.state()), plugin.WithRewardHandler(handler))
	assert.NoError(t, err, "polling on: the handler is called")
}

// TestNewRefusesAV1SecretAsTheV0Auth: a whs_ secret in WebhookAuth (every v0
// delivery would then get 403) is refused at New and by LoadEnv, naming
// WebhookSecrets as the fix, never the secret.
func TestNewRefusesAV1SecretAsTheV0Auth(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	_, err := plugin.New(w.client, plugin.Config{WebhookAuth: "whs_secretvalue"}, plugin.WithState(w.state()))
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "plugin.Config.WebhookAuth", ce.Field)
	assert.Contains(t, err.Error(), "WebhookSecrets")
	assert.NotContains(t, err.Error(), "secretvalue")

	var cfg plugin.Config
	err = plugin.LoadEnv(t.Context(), &cfg, envconfig.MapLookuper(map[string]string{"TOPGG_WEBHOOK_AUTH": "whs_secretvalue"}))
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_WEBHOOK_AUTH", ce.Variable)
	assert.Contains(t, err.Error(), "TOPGG_WEBHOOK_SECRET")
}
