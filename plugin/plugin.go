package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sourcegraph/conc"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/backoff"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// Plugin puts a discordgo bot on its Top.gg listing: it posts server and shard
// counts, publishes slash commands on the first READY, and polls votes to call the
// reward and expiry handlers. Make it with [New], [Plugin.Attach] every shard's
// session before it opens, then [Plugin.Start]; [Plugin.Close] stops everything.
// Its methods are safe for concurrent use.
type Plugin struct {
	client *topgg.Client
	cfg    Config
	opts   options
	log    *slog.Logger

	poster *autopost.Poster // nil when autopost is off
	syncer *commands.Syncer // nil when command sync is off

	firstReady     chan *discordgo.Session // the first session to get READY
	firstReadyOnce sync.Once
	detach         []func() // removes the handlers Attach added

	poller atomic.Pointer[voterewards.Poller] // the running poller, for Active

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc
	jobs    conc.WaitGroup
	store   *voterewards.BoltStore
	closed  bool
}

// New checks cfg and builds the plugin's jobs. It makes no request, opens no file and
// starts nothing. A VotePollInterval below 10 seconds is allowed but logged as a
// warning.
func New(client *topgg.Client, cfg Config, opts ...Option) (*Plugin, error) {
	if client == nil {
		return nil, errors.New("plugin: nil *topgg.Client")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	p := &Plugin{
		client:     client,
		cfg:        cfg,
		opts:       o,
		log:        o.logger.With("component", "plugin"),
		firstReady: make(chan *discordgo.Session, 1),
	}
	if cfg.VotePollInterval > 0 && cfg.VotePollInterval < minRecommendedVotePoll {
		p.log.Warn("vote poll interval is below 10 seconds; Top.gg limits how often a bot may ask for its votes",
			"interval", cfg.VotePollInterval)
	}
	if cfg.Autopost != AutopostOff {
		mode := autopost.ModeV1
		if cfg.Autopost == AutopostV0 {
			mode = autopost.ModeV0
		}
		poster, err := autopost.New(client, autopost.Config{
			Mode: mode, Interval: cfg.AutopostInterval, OnPost: o.onPost, Logger: o.logger,
		})
		if err != nil {
			return nil, fmt.Errorf("plugin: %w", err)
		}
		p.poster = poster
	}
	if cfg.SyncCommands {
		var store commands.HashStore = commands.NewMemoryHashStore()
		if cfg.StateDir != "" {
			store = commands.NewFileHashStore(filepath.Join(cfg.StateDir, "commands.sha256"))
		}
		syncer, err := commands.New(client, commands.Config{Store: store, Logger: o.logger})
		if err != nil {
			return nil, fmt.Errorf("plugin: %w", err)
		}
		p.syncer = syncer
	}
	return p, nil
}

// Attach registers the plugin's handlers on every shard's session. Call it before the
// sessions open (their READY is what the plugin waits for) and before Start.
// Close removes them again.
func (p *Plugin) Attach(sessions ...*discordgo.Session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.poster != nil {
		p.detach = append(p.detach, p.poster.Attach(sessions...))
	}
	for _, s := range sessions {
		if s == nil {
			continue
		}
		p.detach = append(p.detach, s.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) {
			p.firstReadyOnce.Do(func() { p.firstReady <- s })
		}))
	}
}

// Start runs the jobs in the background until ctx is done or Close is called: the
// vote poller at once, command sync on the first READY, the poster once every shard
// is ready. A job that fails or panics is logged and restarted with backoff; it never
// takes the bot down. Start fails if the state directory cannot be opened (another
// process holding it included) or if the plugin was started before.
func (p *Plugin) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return errors.New("plugin: already started or closed")
	}
	var store voterewards.Store = p.opts.voteStore
	if p.cfg.VotePollInterval > 0 && store == nil {
		s, err := voterewards.OpenStore(p.cfg.StateDir)
		if err != nil {
			return fmt.Errorf("plugin: vote state: %w", err)
		}
		p.store, store = s, s
	}
	ctx, cancel := context.WithCancel(ctx)
	p.cancel, p.started = cancel, true

	if p.cfg.VotePollInterval > 0 {
		p.jobs.Go(func() {
			supervise(ctx, p.log, "votes", func(ctx context.Context) error { return p.runVotes(ctx, store) })
		})
	}
	if p.syncer != nil {
		p.jobs.Go(func() { supervise(ctx, p.log, "commands", p.syncCommands) })
	}
	if p.poster != nil {
		p.jobs.Go(func() { supervise(ctx, p.log, "autopost", p.runPoster) })
	}
	return nil
}

// runVotes runs one poller until ctx is done. A poller runs once, so a restart after
// a failure builds a new one on the same store.
func (p *Plugin) runVotes(ctx context.Context, store voterewards.Store) error {
	poller, err := voterewards.New(p.client, voterewards.Config{
		OnReward: p.opts.onReward,
		OnExpire: p.opts.onExpire,
		OnGiveUp: p.opts.onGiveUp,
		Store:    store,
		Lookback: p.cfg.VoteLookback,
		Interval: p.cfg.VotePollInterval,
		Logger:   p.opts.logger,
		// How long running handlers may finish after the stop (WithCloseTimeout).
		GracePeriod: p.opts.closeTimeout,
	})
	if err != nil {
		return err
	}
	p.poller.Store(poller)
	return poller.Run(ctx)
}

// runPoster runs the poster until ctx is done. Without an attached session there is
// nothing to count, which no restart mends: it is said once, not retried.
func (p *Plugin) runPoster(ctx context.Context) error {
	err := p.poster.Run(ctx)
	if errors.Is(err, autopost.ErrNoSessions) {
		p.log.Warn("autopost is on but no session is attached; nothing to post")
		return nil
	}
	return err
}

// commandResync is how often commands read from Discord are compared with the
// listing again. A bot often registers its commands in its own READY handler, so the
// first read may come too early; an unchanged list costs one Discord GET and no PUT.
const commandResync = 15 * time.Minute

// syncCommands waits for the first READY, then publishes the commands given with
// [WithCommands] once, or, without them, the application's commands read from
// Discord, again every commandResync.
func (p *Plugin) syncCommands(ctx context.Context) error {
	var s *discordgo.Session
	select {
	case <-ctx.Done():
		return nil
	case s = <-p.firstReady:
		// Put it back so that a restarted sync finds it too.
		p.firstReady <- s
	}
	for {
		var err error
		if p.opts.commands != nil {
			_, err = p.syncer.Sync(ctx, p.opts.commands)
		} else {
			_, err = p.syncer.SyncFromDiscord(ctx, s)
		}
		if permanent(err) {
			// The service refused these definitions; sending them again will not help.
			p.log.Error("Top.gg refused the slash commands; not retrying until restart", "error", err)
			return nil
		}
		if err != nil {
			return fmt.Errorf("command sync: %w", err)
		}
		if p.opts.commands != nil {
			return nil
		}
		if backoff.Sleep(ctx, commandResync) != nil {
			return nil
		}
	}
}

// permanent reports an error that no retry mends: the arguments broke a rule, or the
// service refused them with a 4xx other than 429.
func permanent(err error) bool {
	var ve *topgg.ValidationError
	var ae *topgg.APIError
	var rl *topgg.RateLimitError
	switch {
	case err == nil, errors.As(err, &rl):
		return false
	case errors.As(err, &ve):
		return true
	case errors.As(err, &ae):
		return ae.StatusCode >= 400 && ae.StatusCode < 500
	}
	return false
}

// Active reports from memory, without a request, whether the user (Discord user id
// or Top.gg user id) has an active vote. Status.Covered is false until the poller has
// read the whole vote window, and always when vote polling is off.
func (p *Plugin) Active(userID string) voterewards.Status {
	if poller := p.poller.Load(); poller != nil {
		return poller.Active(userID)
	}
	return voterewards.Status{}
}

// Counts returns the server and shard counts the poster would post now; the zero
// value when autopost is off.
func (p *Plugin) Counts() autopost.Counts {
	if p.poster == nil {
		return autopost.Counts{}
	}
	return p.poster.Counts()
}

// Close stops the jobs, waits for them, saves and closes the state, and leaves no
// goroutine behind. The vote handlers that are running get the close timeout
// ([WithCloseTimeout], default 10 s) to finish; then their context is cancelled, Close
// waits for them to return, and the cancellation is logged as a warning. It is not
// Close's error: a handler that returns an error then leaves its vote pending, to be
// delivered again at the next start. Close may be called more than once, and before
// Start.
func (p *Plugin) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	// The jobs stop before the handlers go, so that no post sees the counts vanish.
	defer func() {
		for _, d := range p.detach {
			d()
		}
	}()
	if !p.started {
		return nil
	}
	p.cancel()
	p.jobs.Wait()
	if p.store != nil {
		if err := p.store.Close(); err != nil {
			return fmt.Errorf("plugin: closing vote state: %w", err)
		}
	}
	return nil
}
