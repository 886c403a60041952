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

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// Plugin puts a discordgo bot on its Top.gg listing: it posts server and shard
// counts, publishes slash commands on the first READY, and polls votes to call the
// reward and expiry handlers. Make it with [New], [Plugin.Attach] every shard's
// session before it opens, then [Plugin.Run] it until the bot stops. Its methods
// are safe for concurrent use.
type Plugin struct {
	client *topgg.Client
	set    settings
	opts   options
	log    *slog.Logger
	sup    supervisor

	poster *autopost.Poster // nil when autopost is off
	syncer *commands.Syncer // nil when command sync is off
	hook   *webhook.Handler // nil when webhooks are off
	fleet  *fleetParts      // nil unless WithFleet (fleet.go)

	firstReady     chan *discordgo.Session // the first session to get READY
	firstReadyOnce sync.Once

	poller atomic.Pointer[voterewards.Poller] // the running poller, for Active
	states *jobStates                         // for liveness

	// mu guards the fields below. It is never held while a job runs or stops.
	mu       sync.Mutex
	sessions int  // how many sessions are attached
	ran      bool // Run was called: Attach is refused from then on
	running  bool
}

// New checks cfg (a zero field means its default) and builds the plugin's jobs. It
// makes no request, opens no file and starts nothing. Errors: a *[ConfigError]
// naming the Go field, or [topgg.ErrNilArgument] for a nil client or option value. A
// VotePollInterval below 10 seconds is allowed but logged as a warning.
func New(client *topgg.Client, cfg Config, opts ...Option) (*Plugin, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: New: nil *topgg.Client", errNilArg)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := defaultOptions()
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: New: option %d is nil", errNilArg, i)
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	o.wireMetrics()
	set := cfg.resolve()
	p := &Plugin{
		client:     client,
		set:        set,
		opts:       o,
		log:        o.logger.With("component", "plugin"),
		firstReady: make(chan *discordgo.Session, 1),
	}
	p.states = &jobStates{clock: o.clock}
	p.sup = supervisor{log: p.log, clock: o.clock, states: p.states}
	if set.votePoll > 0 && set.votePoll < minRecommendedVotePoll {
		p.log.Warn("vote poll interval is below 10 seconds; Top.gg limits how often a bot may ask for its votes",
			"interval", set.votePoll)
	}
	if err := p.buildJobs(); err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	if err := p.buildWebhook(); err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	return p, nil
}

// minRecommendedVotePoll is the shortest vote poll interval that does not log a
// warning: the service limits how often a project may ask for its votes, and a vote
// a few seconds late costs nothing. Tests use shorter intervals, so it is no error.
const minRecommendedVotePoll = 10 * time.Second

// buildJobs makes the poster and the syncer the settings turn on.
func (p *Plugin) buildJobs() error {
	if p.set.Autopost != AutopostOff {
		mode := autopost.ModeV1
		if p.set.Autopost == AutopostV0 {
			mode = autopost.ModeV0
		}
		poster, err := autopost.New(p.client, autopost.Config{
			Mode: mode, Interval: p.set.AutopostInterval, Refresh: p.set.AutopostRefresh,
			ReadyTimeout: p.set.AutopostReadyTimeout, OnPost: p.opts.onPost, Logger: p.opts.logger,
		})
		if err != nil {
			return err
		}
		p.poster = poster
	}
	if p.set.syncCommands {
		store := commands.NewFileHashStore(filepath.Join(p.set.StateDir, "commands.sha256"))
		syncer, err := commands.New(p.client, commands.Config{Store: store, Logger: p.opts.logger})
		if err != nil {
			return err
		}
		p.syncer = syncer
	}
	return p.buildFleet()
}

// Attach registers the plugin's handlers on every shard's session. Call it before
// the sessions open (their READY is what the jobs wait for) and before the first
// [Plugin.Run]. It returns [ErrAttachAfterRun] once Run was called,
// [autopost.ErrSessionOpen] for a session that is open or opening, [topgg.ErrNilArgument] for
// a nil session or none, and [topgg.ErrNotConfigured] for a Plugin not made by [New]; it
// then attaches none of them. The handlers stay for the
// plugin's life, so the counts are kept between two Runs.
func (p *Plugin) Attach(sessions ...*discordgo.Session) error {
	if !p.made() {
		return errNotMade
	}
	if len(sessions) == 0 {
		return fmt.Errorf("%w: Attach: no session", errNilArg)
	}
	for i, s := range sessions {
		if s == nil {
			return fmt.Errorf("%w: Attach: session %d is nil", errNilArg, i)
		}
		if shards.Opened(s) {
			return fmt.Errorf("plugin: Attach: session %d (shard %d): %w", i, s.ShardID, autopost.ErrSessionOpen)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ran {
		return ErrAttachAfterRun
	}
	if p.poster != nil {
		if _, err := p.poster.Attach(sessions...); err != nil {
			return fmt.Errorf("plugin: Attach: %w", err)
		}
	}
	for _, s := range sessions {
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) {
			p.firstReadyOnce.Do(func() { p.firstReady <- s })
		})
	}
	p.sessions += len(sessions)
	return nil
}

// Run runs the jobs until ctx is done, then stops them and returns nil once
// nothing of them is left: the vote poller at once, command sync on the first
// READY, the poster once every shard is ready. A job that fails or panics is
// logged and restarted with backoff; it never takes the bot down. A job that fails
// in a way no restart mends (Top.gg refused the token) stops the others, and Run
// returns its error wrapping [ErrJobFailed] and the cause (errors.Is(err,
// topgg.ErrUnauthorized) tells a refused token).
//
// Run returns at once with [topgg.ErrNotConfigured] for a Plugin not made by [New],
// [topgg.ErrRunning] while another Run of the plugin has not
// returned, [autopost.ErrNoSessions] when autopost or command sync is on and no session is
// attached, or an error opening the state directory (another process holding it
// included: [voterewards.ErrLocked]). Run may be called again after it returned
// (a fleet runs it each time this process leads); the vote state is opened and
// closed by each Run.
func (p *Plugin) Run(ctx context.Context) error {
	if !p.made() {
		return errNotMade
	}
	if err := p.begin(); err != nil {
		return err
	}
	defer p.end()
	p.states.begin()

	var store voterewards.Store = p.opts.voteStore
	var bolt *voterewards.BoltStore
	if p.set.votePoll > 0 && store == nil && p.fleet == nil { // a fleet's leader opens it (fleet.go)
		s, err := voterewards.OpenStore(p.set.StateDir)
		if err != nil {
			return fmt.Errorf("plugin: vote state: %w", err)
		}
		bolt, store = s, s
	}

	l, err := p.listenWebhook(ctx)
	if err != nil {
		if bolt != nil {
			err = errors.Join(err, bolt.Close())
		}
		return err
	}

	jobs := p.jobs(store)
	if l != nil {
		jobs = append(jobs, job{"webhook", p.webhookJob(l)})
	}
	err = p.supervise(ctx, jobs) // without p.mu: Active, Counts and Attach answer meanwhile
	p.poller.Store(nil)
	p.states.end(err)
	if bolt != nil {
		if cerr := bolt.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("plugin: closing vote state: %w", cerr))
		}
	}
	return err
}

// made reports whether p was made by New: a zero Plugin would run no job and
// block its sessions' READY handlers on a nil channel.
func (p *Plugin) made() bool { return p != nil && p.firstReady != nil }

// supervise runs jobs under the supervisor until ctx is done, and returns
// once every one has returned. A job that fails in a way no restart mends
// stops the others, and its error is returned.
func (p *Plugin) supervise(ctx context.Context, jobs []job) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			if err := p.sup.run(ctx, j.name, j.run); err != nil {
				failed[i] = err
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(failed...)
}

// begin marks the plugin running, or says why it cannot run.
func (p *Plugin) begin() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return errRunning
	}
	if p.sessions == 0 && (p.poster != nil || p.syncer != nil) {
		return fmt.Errorf("plugin: Run: autopost or command sync is on (turn them off in Config to run without sessions): %w", autopost.ErrNoSessions)
	}
	p.running, p.ran = true, true
	return nil
}

func (p *Plugin) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = false
}

// job is one supervised job of a Run.
type job struct {
	name string
	run  func(context.Context) error
}

// jobs lists the jobs the settings turn on.
func (p *Plugin) jobs(store voterewards.Store) []job {
	var jobs []job
	if p.set.votePoll > 0 {
		jobs = append(jobs, job{"votes", func(ctx context.Context) error { return p.runVotes(ctx, store) }})
	}
	if p.syncer != nil {
		jobs = append(jobs, job{"commands", p.syncCommands})
	}
	if p.poster != nil {
		jobs = append(jobs, job{"autopost", p.poster.Run})
	}
	return p.fleetJobs(jobs)
}

// runVotes runs one poller until ctx is done. A poller runs once, so a restart after
// a failure builds a new one on the same store.
func (p *Plugin) runVotes(ctx context.Context, store voterewards.Store) error {
	poller, err := p.newPoller(store)
	if err != nil {
		return err
	}
	p.poller.Store(poller)
	return poller.Run(ctx)
}

// newPoller builds a vote poller on store with the plugin's settings and
// handlers: the one place a poller is configured, in one process or a fleet.
func (p *Plugin) newPoller(store voterewards.Store) (*voterewards.Poller, error) {
	return voterewards.New(p.client, voterewards.Config{
		OnReward:    p.opts.onReward,
		OnExpire:    p.opts.onExpire,
		OnGiveUp:    p.opts.onGiveUp,
		Store:       store,
		Lookback:    p.set.VoteLookback,
		Interval:    p.set.votePoll,
		Concurrency: p.set.VoteConcurrency,
		MaxAttempts: p.set.VoteAttempts,
		RetryDelay:  p.set.VoteRetryDelay,
		GracePeriod: p.set.VoteStopGrace,
		Observer:    p.opts.voteObserver,
		Logger:      p.opts.logger,
	})
}

// Active reports from memory, without a request, whether the user (Discord user id
// or Top.gg user id) has an active vote. Status.Covered is false until the poller has
// read the whole vote window, when Run is not running, and always when vote polling
// is off.
func (p *Plugin) Active(userID string) voterewards.Status {
	if poller := p.poller.Load(); poller != nil {
		return poller.Active(userID)
	}
	return voterewards.Status{}
}

// Counts returns the server and shard counts the poster would post now; the zero
// value when autopost is off. The counts are kept while Run is not running.
func (p *Plugin) Counts() autopost.Counts {
	if p.poster == nil {
		return autopost.Counts{}
	}
	c, _ := p.poster.Counter().Counts(context.Background()) // fails only on a done context
	return c
}
