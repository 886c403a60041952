package plugin

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// Option configures a Plugin in [New]. An Option given a nil value makes New fail
// with [topgg.ErrNilArgument]: leaving an option out is how to keep its default.
type Option func(*options) error

type options struct {
	logger   *slog.Logger
	onReward voterewards.Handler
	onExpire voterewards.Handler
	onGiveUp func(voterewards.Vote, error)
	onPost   func(autopost.Result)
	onSync   func(context.Context, commands.Result, error)
	commands []*discordgo.ApplicationCommand
	haveCmds bool
	state    voterewards.State // WithState
	leader   leader            // always, or WithFleet's (fleet.go)
	perks    *VoterPerks       // WithVoterPerks (perks.go)
	clock    clock.Clock       // set by tests (export_test.go)

	metrics         Observer                // WithMetrics (metrics.go)
	voteObserver    func(voterewards.Event) // from metrics: nil without
	webhookObserver func(webhook.Outcome)   // from metrics: nil without
}

func nilArg(option string) error { return fmt.Errorf("%w: %s(nil)", errNilArg, option) }

// WithLogger sets the logger of the plugin and its jobs (default: slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return nilArg("WithLogger")
		}
		o.logger = l
		return nil
	}
}

// WithRewardHandler sets the handler called once for every new vote. It is retried
// on error and must be idempotent on [voterewards.Vote.Key]: a crash between its return
// and the record of it makes it run again.
func WithRewardHandler(h voterewards.Handler) Option {
	return func(o *options) error {
		if h == nil {
			return nilArg("WithRewardHandler")
		}
		o.onReward = h
		return nil
	}
}

// WithExpiryHandler sets the handler called once for every rewarded vote when it
// expires, e.g. to take a voter role back. The user may have voted again since:
// check [Plugin.Active] before taking anything back.
func WithExpiryHandler(h voterewards.Handler) Option {
	return func(o *options) error {
		if h == nil {
			return nilArg("WithExpiryHandler")
		}
		o.onExpire = h
		return nil
	}
}

// WithGiveUpHandler sets the function called when a handler failed every attempt (err is a
// *voterewards.DeliveryError), or when recording a delivered vote kept failing (its
// Recording set: the vote stays pending and is delivered again at the next start).
func WithGiveUpHandler(f func(voterewards.Vote, error)) Option {
	return func(o *options) error {
		if f == nil {
			return nilArg("WithGiveUpHandler")
		}
		o.onGiveUp = f
		return nil
	}
}

// WithOnPost sets a function called after every autopost attempt.
func WithOnPost(f func(autopost.Result)) Option {
	return func(o *options) error {
		if f == nil {
			return nilArg("WithOnPost")
		}
		o.onPost = f
		return nil
	}
}

// WithCommandSyncHandler sets the function told the outcome of every command-sync
// attempt: the result and a nil error when the listing is up to date, the error
// when the attempt failed (a refused definition or token, a service error; also
// logged). Use it to alert on, or stop the bot for, slash commands the listing
// refused. It is called from the sync job's goroutine and should return soon; a
// panic in it is recovered and logged.
func WithCommandSyncHandler(f func(ctx context.Context, r commands.Result, err error)) Option {
	return func(o *options) error {
		if f == nil {
			return nilArg("WithCommandSyncHandler")
		}
		o.onSync = f
		return nil
	}
}

// WithCommands sets the slash commands to publish. Without it, the plugin publishes
// the application's commands as Discord has them after the first READY. A non-nil
// empty slice clears the listing's commands; a nil slice or a nil command is an
// error ([topgg.ErrNilArgument]), and so is a definition Discord would refuse: [New]
// returns the *topgg.ValidationError of [commands.Validate].
func WithCommands(cmds []*discordgo.ApplicationCommand) Option {
	return func(o *options) error {
		if cmds == nil {
			return nilArg("WithCommands")
		}
		for i, c := range cmds {
			if c == nil {
				return fmt.Errorf("%w: WithCommands: command %d is nil", errNilArg, i)
			}
		}
		// Checked here, where they are given: a definition Discord would
		// refuse (an upper-case name, say) used to surface only once the
		// sync ran, as a log line, and the bot ran with no commands listed.
		if err := commands.Validate(cmds); err != nil {
			return fmt.Errorf("plugin: WithCommands: %w", err)
		}
		o.commands, o.haveCmds = cmds, true
		return nil
	}
}

// WithState sets where the bot's state lives: votes and ledger, the last
// published command hash and the reminder opt-ins, all in s (boltstate for a
// directory, redisstate for Redis, pgstore for PostgreSQL). Vote polling and
// command sync need one. New hands s the leader's fence; the caller closes s
// after Run returned.
func WithState(s voterewards.State) Option {
	return func(o *options) error {
		if typednil.Is(s) {
			return nilArg("WithState")
		}
		o.state = s
		return nil
	}
}

// needState refuses a config whose jobs keep state when no [WithState] gave one.
func (o *options) needState(set settings) error {
	if o.state == nil && set.KeepsState() {
		return fmt.Errorf("plugin: vote polling and command sync keep state: %w (WithState)", topgg.ErrNotConfigured)
	}
	return nil
}

// useFence hands the state the leader's fence (nil in one process), so that
// no shared state runs unfenced.
func (o *options) useFence() error {
	if o.state == nil {
		return nil
	}
	if err := o.state.UseFence(o.leader.fence()); err != nil {
		return fmt.Errorf("plugin: WithState: %w", err)
	}
	return nil
}
