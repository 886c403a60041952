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
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// Option configures a Plugin in [New]. An Option given a nil value makes New fail
// with [topgg.ErrNilArgument]: leaving an option out is how to keep its default.
type Option func(*options) error

type options struct {
	logger    *slog.Logger
	onReward  voterewards.Handler
	onExpire  voterewards.Handler
	onGiveUp  func(voterewards.Vote, error)
	onPost    func(autopost.Result)
	onSync    func(context.Context, commands.Result, error)
	commands  []*discordgo.ApplicationCommand
	haveCmds  bool
	voteStore voterewards.Store
	// newFleet makes the fleet backend (WithFleet, backend_fleet.go). No
	// field of options or Plugin holds a *fleet.Fleet: a program that never
	// calls WithFleet then links none of the fleet's code, nor, through it,
	// the Redis client (a field would keep every method of the fleet's types,
	// since the linker keeps what reflection over a Plugin could reach).
	newFleet func() backend
	perks    *VoterPerks // WithVoterPerks (perks.go)
	clock    clock.Clock // set by tests (export_test.go)

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

// WithVoteStore replaces the vote state kept in Config.StateDir, e.g. with
// voterewards.NewMemoryStore() for tests, or with the bot's own PostgreSQL
// database (a *pgstore.Store, which the bot opens: its handler rewards
// through the store's transaction, pgstore.Store.Reward, exactly once; in a
// fleet, open it with [FleetFence]). The plugin does not close it: the caller
// does, after Run returned.
func WithVoteStore(s voterewards.Store) Option {
	return func(o *options) error {
		if typednil.Is(s) {
			return nilArg("WithVoteStore")
		}
		o.voteStore = s
		return nil
	}
}
