package plugin

import (
	"context"
	"log/slog"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/voterewards"
)

// Option configures a Plugin in [New].
type Option func(*options)

type options struct {
	logger    *slog.Logger
	onReward  voterewards.Handler
	onExpire  voterewards.Handler
	onGiveUp  func(voterewards.Vote, error)
	onPost    func(autopost.Result)
	commands  []*discordgo.ApplicationCommand
	voteStore voterewards.Store
	// closeTimeout is passed to voterewards.Config.GracePeriod; 0 means its default.
	closeTimeout time.Duration
}

func defaultOptions() options {
	return options{
		logger: slog.New(slog.DiscardHandler),
		// Without a reward handler the poller still runs, to answer Active.
		onReward: func(context.Context, voterewards.Vote) error { return nil },
	}
}

// WithLogger sets the logger of the plugin and its jobs (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithRewardHandler sets the handler called once for every new vote. It is retried
// on error and must be idempotent on [voterewards.Vote.Key]: a crash between its return
// and the record of it makes it run again.
func WithRewardHandler(h voterewards.Handler) Option {
	return func(o *options) {
		if h != nil {
			o.onReward = h
		}
	}
}

// WithExpiryHandler sets the handler called once for every rewarded vote when it
// expires, e.g. to take a voter role back.
func WithExpiryHandler(h voterewards.Handler) Option {
	return func(o *options) { o.onExpire = h }
}

// WithGiveUpHandler sets the function called when a handler failed every attempt (err is a
// *voterewards.DeliveryError), or when recording a delivered vote kept failing (a
// *voterewards.RecordError: the vote stays pending and is delivered again at the next start).
func WithGiveUpHandler(f func(voterewards.Vote, error)) Option {
	return func(o *options) { o.onGiveUp = f }
}

// WithOnPost sets a function called after every autopost attempt.
func WithOnPost(f func(autopost.Result)) Option {
	return func(o *options) { o.onPost = f }
}

// WithCommands sets the slash commands to publish. Without it, the plugin publishes
// the application's commands as Discord has them after the first READY. A non-nil
// empty slice clears the listing's commands.
func WithCommands(cmds []*discordgo.ApplicationCommand) Option {
	return func(o *options) { o.commands = cmds }
}

// WithVoteStore replaces the vote state kept in Config.StateDir, e.g. with
// voterewards.NewMemoryStore() for tests. The caller closes it after Close.
func WithVoteStore(s voterewards.Store) Option {
	return func(o *options) { o.voteStore = s }
}

// WithCloseTimeout sets how long [Plugin.Close] lets the vote handlers that are
// running finish before it cancels their context (voterewards.Config.GracePeriod;
// default [voterewards.DefaultGracePeriod], 10 s). Close returns once they have
// returned, so a handler that honours its context bounds Close by about d. A
// zero or negative d keeps the default.
func WithCloseTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.closeTimeout = d
		}
	}
}
