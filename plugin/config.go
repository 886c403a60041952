package plugin

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// Autopost modes of [Config.Autopost].
const (
	AutopostV1  = "v1"
	AutopostV0  = "v0"
	AutopostOff = "off"
)

// Config holds every setting of the plugin, with the environment variables that set
// them. Embed it in a bot's own envconfig struct, or load it alone with [LoadConfig].
//
// Loading ([LoadConfig], [LoadEnv]) treats each field by its value before the load:
//
//   - A non-zero field (set in code) is kept: its variable is not read, so a value
//     there, even a malformed one, neither changes the field nor fails the load.
//   - A zero field ("", 0, false) counts as unset: it takes its variable's value
//     when the variable is set (even to "0", "false" or ""), else the default
//     shown in its tag.
//
// So code wins only with non-zero values. A zero value cannot say "set in code": a
// SyncCommands = false or VotePollInterval = 0 set before loading becomes the
// default (true, 1m) unless the environment says otherwise. To turn a job off in
// code, set the field after loading (cfg.SyncCommands = false, cfg.VotePollInterval
// = 0), or, for autopost, set Autopost to [AutopostOff], which is not zero.
// A Config built in code without loading gets no defaults: fill every field the
// jobs that are on need.
type Config struct {
	// Autopost is "v1" (PATCH metrics, the default), "v0" (POST /bots/:id/stats) or "off".
	Autopost string `env:"TOPGG_AUTOPOST, default=v1"`
	// AutopostInterval is the time between posts; below 15 minutes is logged as a warning.
	AutopostInterval time.Duration `env:"TOPGG_AUTOPOST_INTERVAL, default=30m"`
	// SyncCommands publishes the bot's slash commands to the listing on start.
	SyncCommands bool `env:"TOPGG_SYNC_COMMANDS, default=true"`
	// VotePollInterval is the time between vote polls; 0 turns polling off. Below
	// 10 seconds [New] logs a warning: the service limits requests.
	VotePollInterval time.Duration `env:"TOPGG_VOTE_POLL_INTERVAL, default=1m"`
	// VoteLookback is how far back the first poll reaches when nothing is saved.
	VoteLookback time.Duration `env:"TOPGG_VOTE_LOOKBACK, default=12h"`
	// StateDir is where poll state (cursor, delivered votes, pending expiries) and
	// the last command-sync hash are kept.
	StateDir string `env:"TOPGG_STATE_DIR, default=./topgg-state"`
}

// minRecommendedVotePoll is the shortest VotePollInterval that does not log a
// warning: the service limits how often a project may ask for its votes, and a vote
// a few seconds late costs nothing. Tests use shorter intervals, so it is no error.
const minRecommendedVotePoll = 10 * time.Second

// ConfigError names the setting that is missing or malformed.
type ConfigError struct {
	// Variable is the environment variable, e.g. "TOPGG_AUTOPOST".
	Variable string
	// Problem says what is wrong with its value.
	Problem string
}

func (e *ConfigError) Error() string { return e.Variable + ": " + e.Problem }

// LoadConfig reads the Config from the environment through lookuper (nil means the
// process environment) into a zero Config, so every field comes from its variable
// or its default, and validates it. Errors are *ConfigError. To mix in values set
// in code, see [LoadEnv].
func LoadConfig(ctx context.Context, lookuper envconfig.Lookuper) (Config, error) {
	var c Config
	if err := LoadEnv(ctx, &c, lookuper); err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// Validate checks the values, returning a *ConfigError naming the first bad one.
func (c Config) Validate() error {
	switch c.Autopost {
	case AutopostV1, AutopostV0, AutopostOff:
	default:
		return &ConfigError{"TOPGG_AUTOPOST", fmt.Sprintf("%q is not one of v1, v0, off", c.Autopost)}
	}
	if c.Autopost != AutopostOff && c.AutopostInterval <= 0 {
		return &ConfigError{"TOPGG_AUTOPOST_INTERVAL", fmt.Sprintf("%s is not a positive duration", c.AutopostInterval)}
	}
	if c.VotePollInterval < 0 {
		return &ConfigError{"TOPGG_VOTE_POLL_INTERVAL", fmt.Sprintf("%s is negative", c.VotePollInterval)}
	}
	if c.VotePollInterval > 0 {
		if c.VoteLookback <= 0 {
			return &ConfigError{"TOPGG_VOTE_LOOKBACK", fmt.Sprintf("%s is not a positive duration", c.VoteLookback)}
		}
		if c.VoteLookback > 365*24*time.Hour {
			return &ConfigError{"TOPGG_VOTE_LOOKBACK", fmt.Sprintf("%s reaches more than one year back", c.VoteLookback)}
		}
		if c.StateDir == "" {
			return &ConfigError{"TOPGG_STATE_DIR", "is empty"}
		}
	}
	return nil
}

// LoadEnv fills target, a pointer to a struct with go-envconfig `env` tags (such as a
// bot's own configuration embedding Config), from lookuper (nil means the process
// environment). A missing or malformed value comes back as a *ConfigError that names
// the environment variable, not the Go field.
//
// It follows go-envconfig's rule, field by field at any depth: a field that is
// non-zero in target before the call is kept and its variable not read; a zero
// field takes its variable's value if the variable is set, else its default. Hence
// values set in code win only when non-zero; to set a zero value in code (turn a
// job off with SyncCommands = false or VotePollInterval = 0), set it after LoadEnv
// returns. LoadEnv does not validate: call [Config.Validate] (or let [New] do it).
func LoadEnv(ctx context.Context, target any, lookuper envconfig.Lookuper) error {
	if lookuper == nil {
		lookuper = envconfig.OsLookuper()
	}
	err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: target, Lookuper: lookuper})
	if err == nil {
		return nil
	}
	if errors.Is(err, envconfig.ErrMissingRequired) {
		msg := err.Error()
		return &ConfigError{Variable: msg[strings.LastIndex(msg, " ")+1:], Problem: "is required but not set"}
	}
	// go-envconfig names the Go field path ("Plugin: AutopostInterval: time: ...");
	// walk it to the field's tag so the operator reads the variable they set.
	msg := err.Error()
	t := reflect.TypeOf(target)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for {
		name, rest, ok := strings.Cut(msg, ": ")
		if !ok || t.Kind() != reflect.Struct {
			break
		}
		f, found := t.FieldByName(name)
		if !found {
			break
		}
		msg = rest
		if key, _, _ := strings.Cut(f.Tag.Get("env"), ","); key != "" {
			if strings.Contains(key, "TOKEN") || strings.Contains(key, "SECRET") {
				return &ConfigError{Variable: key, Problem: "is malformed"}
			}
			return &ConfigError{Variable: key, Problem: "is malformed: " + msg}
		}
		t = f.Type
	}
	return fmt.Errorf("plugin: configuration: %w", err)
}
