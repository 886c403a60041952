package plugin

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// Option configures a Plugin in [New]. An Option given a nil value makes New
// fail with [topgg.ErrNilArgument]; leave an option out for its default.
type Option func(*options) error

type options struct {
	metricsPanicked *atomic.Bool // the metrics Observer panicked once: its stack was logged
	logger          *slog.Logger
	onReward        voterewards.Handler
	onExpire        voterewards.Handler
	onGiveUp        func(voterewards.Vote, error)
	onPost          func(autopost.Result)
	onSync          func(context.Context, commands.Result, error)
	commands        []*discordgo.ApplicationCommand
	haveCmds        bool
	state           voterewards.State // WithState
	leader          leader            // always, or WithFleet's (leader.go)
	perks           *VoterPerks       // WithVoterPerks (perks.go)
	clock           clock.Clock       // set by tests (export_test.go)
	handlers        []string          // the handler options given, by name (for unusedHandler)

	metrics         Observer                // WithMetrics (metrics.go)
	voteObserver    func(voterewards.Event) // from metrics: nil without
	webhookObserver func(error)             // from metrics: nil without
}

func nilArg(option string) error { return fmt.Errorf("%w: %s(nil)", errNilArg, option) }

// setOption is an Option that refuses a nil v, else stores it with put; a handler
// (name in handlers) is refused by New when the settings turn its job off.
func setOption[T any](name string, v T, handler bool, put func(*options, T)) Option {
	return func(o *options) error {
		if typednil.Is(v) {
			return nilArg(name)
		}
		put(o, v)
		if handler {
			o.handlers = append(o.handlers, name)
		}
		return nil
	}
}

// WithLogger sets the logger of the plugin and its jobs (default: slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return setOption("WithLogger", l, false, func(o *options, l *slog.Logger) { o.logger = l })
}

// WithRewardHandler sets the handler called once for every new vote. It is
// retried on error and must be idempotent on [voterewards.Vote.Key].
func WithRewardHandler(h voterewards.Handler) Option {
	return setOption("WithRewardHandler", h, true, func(o *options, h voterewards.Handler) { o.onReward = h })
}

// WithExpiryHandler sets the handler called once for every rewarded vote when
// it expires. The user may have voted again: check [Plugin.Active].
func WithExpiryHandler(h voterewards.Handler) Option {
	return setOption("WithExpiryHandler", h, true, func(o *options, h voterewards.Handler) { o.onExpire = h })
}

// WithGiveUpHandler sets the function told, with a *voterewards.DeliveryError, of a
// vote whose handler (or its record) failed every attempt; the vote stays pending.
func WithGiveUpHandler(f func(voterewards.Vote, error)) Option {
	return setOption("WithGiveUpHandler", f, true, func(o *options, f func(voterewards.Vote, error)) { o.onGiveUp = f })
}

// WithOnPost sets a function called after every autopost attempt.
func WithOnPost(f func(autopost.Result)) Option {
	return setOption("WithOnPost", f, true, func(o *options, f func(autopost.Result)) { o.onPost = f })
}

// WithCommandSyncHandler sets the function told every command sync's outcome (nil
// error: up to date), from the sync's goroutine; it should return soon.
func WithCommandSyncHandler(f func(ctx context.Context, r commands.Result, err error)) Option {
	return setOption("WithCommandSyncHandler", f, true, func(o *options, f func(context.Context, commands.Result, error)) { o.onSync = f })
}

// WithCommands sets the slash commands to publish (default: Discord's after the first
// READY; empty clears them). A nil one is [topgg.ErrNilArgument], an invalid one a *topgg.ValidationError.
func WithCommands(cmds []*discordgo.ApplicationCommand) Option {
	return func(o *options) error {
		if cmds == nil {
			return nilArg("WithCommands")
		}
		if i := slices.Index(cmds, nil); i >= 0 {
			return fmt.Errorf("%w: WithCommands: command %d is nil", errNilArg, i)
		}
		// Checked where they are given, not when the sync runs.
		if err := commands.Validate(cmds); err != nil {
			return fmt.Errorf("plugin: WithCommands: %w", err)
		}
		o.commands, o.haveCmds = cmds, true
		return nil
	}
}

// WithState sets where the bot's state lives, which vote polling and command
// sync need. New hands s the leader's fence; the caller closes s after Run.
func WithState(s voterewards.State) Option {
	return setOption("WithState", s, false, func(o *options, s voterewards.State) { o.state = s })
}

// needState refuses a config whose jobs keep state when no [WithState] gave one.
func (o *options) needState(set settings) error {
	if o.state == nil && set.KeepsState() {
		return fmt.Errorf("plugin: vote polling and command sync keep state: %w (WithState)", topgg.ErrNotConfigured)
	}
	return nil
}

// unusedHandler refuses a handler whose job the settings turn off: it would never be called.
func (o *options) unusedHandler(set settings) error {
	for _, name := range o.handlers {
		field, off, is := "plugin.Config.VotePollInterval", set.votePoll <= 0, "is 0 (vote polling off)"
		switch name {
		case "WithOnPost":
			field, off, is = "plugin.Config.Autopost", set.Autopost == "off", `is "off"`
		case "WithCommandSyncHandler":
			field, off, is = "plugin.Config.SyncCommands", !set.syncCommands, "is false"
		}
		if off {
			return &topgg.ConfigError{Field: field, Problem: is + ", so the handler of " + name + " would never be called"}
		}
	}
	return nil
}

// useFence hands the state the leader's fence (nil in one process).
func (o *options) useFence() error {
	if o.state == nil {
		return nil
	}
	if err := o.state.UseFence(o.leader.fence()); err != nil {
		return fmt.Errorf("plugin: WithState: %w", err)
	}
	return nil
}
