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
// Values a program sets before loading win over the environment (go-envconfig leaves
// non-zero fields alone). A zero value cannot say "set in code", so to turn a job off
// in code, set it after loading (for example cfg.SyncCommands = false).
type Config struct {
	// Autopost is "v1" (PATCH metrics, the default), "v0" (POST /bots/:id/stats) or "off".
	Autopost string `env:"TOPGG_AUTOPOST, default=v1"`
	// AutopostInterval is the time between posts; below 15 minutes is logged as a warning.
	AutopostInterval time.Duration `env:"TOPGG_AUTOPOST_INTERVAL, default=30m"`
	// SyncCommands publishes the bot's slash commands to the listing on start.
	SyncCommands bool `env:"TOPGG_SYNC_COMMANDS, default=true"`
	// VotePollInterval is the time between vote polls; 0 turns polling off.
	VotePollInterval time.Duration `env:"TOPGG_VOTE_POLL_INTERVAL, default=1m"`
	// VoteLookback is how far back the first poll reaches when nothing is saved.
	VoteLookback time.Duration `env:"TOPGG_VOTE_LOOKBACK, default=12h"`
	// StateDir is where poll state (cursor, delivered votes, pending expiries) and
	// the last command-sync hash are kept.
	StateDir string `env:"TOPGG_STATE_DIR, default=./topgg-state"`
}

// ConfigError names the setting that is missing or malformed.
type ConfigError struct {
	// Variable is the environment variable, e.g. "TOPGG_AUTOPOST".
	Variable string
	// Problem says what is wrong with its value.
	Problem string
}

func (e *ConfigError) Error() string { return e.Variable + ": " + e.Problem }

// LoadConfig reads the Config from the environment through lookuper (nil means the
// process environment) and validates it. Errors are *ConfigError.
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
