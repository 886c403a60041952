package plugin

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/bwmarrin/discordgo"
	"github.com/sourcegraph/conc/pool"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// Plugin puts a discordgo bot on its Top.gg listing: it posts server and shard
// counts, publishes slash commands and polls votes for the reward and expiry
// handlers. Make it with [New], [Plugin.Attach] every shard's session before
// it opens, then [Plugin.Run] it until the bot stops. Safe for concurrent use.
type Plugin struct {
	client *topgg.Client
	set    settings
	opts   options
	log    *slog.Logger
	sup    supervisor

	// The jobs, each built once by New; nil when turned off.
	counter  *autopost.Counter           // the sessions' counts, which the poster's Source reads
	poster   *autopost.Poster            // posts the leader's Source
	report   func(context.Context) error // publishes this process's shards to the fleet; nil in one process
	commands *commands.Syncer            // publishes the slash commands
	votes    *voterewards.Poller         // polls and delivers the votes

	perks *voterperks.Perks // WithVoterPerks's (perks.go); nil without

	hook  *webhook.Receiver        // nil when webhooks are off
	bound atomic.Pointer[net.Addr] // the webhook server's address while it serves (webhook.go)

	firstReady     chan *discordgo.Session // the first session to get READY
	firstReadyOnce sync.Once

	poller atomic.Pointer[voterewards.Poller] // votes, while Run runs it or its mirror: for Active
	wire   wiring                             // what the plugin learns of its wiring (wiring.go)
	states *jobStates                         // for liveness

	// mu guards the fields below. It is never held while a job runs or stops.
	mu       sync.Mutex
	sessions []*discordgo.Session // attached
	ran      bool                 // Run was called: Attach is refused from then on
	running  bool
}

// New checks cfg, hands the leader's fence to the state and builds the jobs, with no
// request. Errors: *[topgg.ConfigError], [topgg.ErrNotConfigured] (no [WithState]), the state's, [topgg.ErrNilArgument].
func New(client *topgg.Client, cfg Config, opts ...Option) (*Plugin, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: New: nil *topgg.Client", errNilArg)
	}
	if err := cfg.Validate(client); err != nil {
		return nil, err
	}
	o := options{
		logger: slog.Default(), // a forgotten WithLogger must not hide warnings
		// Without a reward handler the poller still runs, to answer Active.
		onReward: func(context.Context, voterewards.Vote) error { return nil },
		clock:    clock.Real(),
		leader:   always{},
	}
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
	if err := cmp.Or(o.needState(set), o.unusedHandler(set)); err != nil {
		return nil, err
	}
	p := &Plugin{
		client:     client,
		set:        set,
		opts:       o,
		log:        o.logger.With("component", "plugin"),
		firstReady: make(chan *discordgo.Session, 1),
		states:     &jobStates{clock: o.clock},
	}
	p.sup = supervisor{log: p.log, clock: o.clock, states: p.states, stopWait: jobStopWait + set.VoteStopGrace}
	for _, build := range []func() error{p.buildPerks, p.buildJobs, p.buildWebhook} { // the perks before the poller: it wraps the handlers
		if err := build(); err != nil {
			return nil, fmt.Errorf("plugin: %w", err)
		}
	}
	// Last: a state takes one fence, so a New that fails leaves it unfenced.
	if err := o.useFence(); err != nil {
		return nil, err
	}
	return p, nil
}

// buildJobs makes the jobs the settings turn on, each once.
func (p *Plugin) buildJobs() error {
	if p.set.Autopost != "off" {
		p.counter = autopost.NewCounter(0)
		src, report, err := p.opts.leader.counts(p.counter)
		if err != nil {
			return err
		}
		p.report = report
		if p.poster, err = autopost.New(p.client, autopost.Config{
			Mode: map[string]autopost.Mode{"v1": autopost.ModeV1, "v0": autopost.ModeV0}[p.set.Autopost], Interval: p.set.AutopostInterval, Refresh: p.set.AutopostRefresh,
			ReadyTimeout: p.set.AutopostReadyTimeout, Source: src, OnPost: p.opts.onPost, Logger: p.opts.logger,
		}); err != nil {
			return err
		}
	}
	if p.set.syncCommands {
		job, err := p.newCommandJob(p.opts.state)
		if err != nil {
			return err
		}
		p.commands = job
	}
	if p.set.votePoll > 0 {
		poller, err := p.newPoller(p.opts.state)
		if err != nil {
			return err
		}
		p.votes = poller
	}
	return nil
}

// Attach registers the plugin's handlers on every shard's session before they open.
// Errors, attaching none: [ErrAttachAfterRun], [autopost.ErrSessionOpen], [topgg.ErrNilArgument].
func (p *Plugin) Attach(sessions ...*discordgo.Session) error {
	if len(sessions) == 0 {
		return fmt.Errorf("%w: Attach: no session", errNilArg)
	}
	for i, s := range sessions {
		if s == nil {
			return fmt.Errorf("%w: Attach: session %d is nil", errNilArg, i)
		}
		if discord.Opened(s) {
			return fmt.Errorf("plugin: Attach: session %d (shard %d): %w", i, s.ShardID, autopost.ErrSessionOpen)
		}
	}
	if p.firstReady == nil {
		// Its READY handlers would block for ever on the nil channel.
		panic("plugin: Attach on a Plugin not made by plugin.New")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ran {
		return ErrAttachAfterRun
	}
	if p.counter != nil {
		if _, err := p.counter.Attach(sessions...); err != nil {
			return fmt.Errorf("plugin: Attach: %w", err)
		}
	}
	for _, s := range sessions {
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) {
			p.firstReadyOnce.Do(func() { p.firstReady <- s })
		})
		if p.perks != nil {
			s.AddHandler(p.perks.Handle)
		} else {
			s.AddHandler(p.noPerksAnswer)
		}
	}
	p.sessions = append(p.sessions, sessions...)
	return nil
}

// Run runs the jobs (in a fleet, the leader's while it leads) until ctx is done, and
// returns nil once none is left; a failing job restarts with backoff, one no restart
// mends ends Run with [ErrJobFailed]. At once: [topgg.ErrRunning], [autopost.ErrNoSessions].
func (p *Plugin) Run(ctx context.Context) error {
	if err := p.begin(); err != nil {
		return err
	}
	defer p.end()
	p.states.begin()

	l, err := p.listenWebhook(ctx)
	if err != nil {
		return err
	}
	jobs := p.jobs()
	if l != nil {
		defer l.Close() // serving closes it; this frees the port when ctx ended before the job ran
		jobs = append(jobs, job{"webhook", p.webhookJob(l)})
	}
	var wg sync.WaitGroup
	wctx, stopWarn := context.WithCancel(ctx)
	wg.Go(func() { p.warnUnopened(wctx) })
	wg.Go(func() { p.checkAtReady(wctx) })
	err = p.supervise(ctx, jobs) // without p.mu: Active and Attach answer meanwhile
	stopWarn()
	wg.Wait()
	p.poller.Store(nil)
	p.states.end(err)
	return err
}

// warnUnopened warns once, after discord.OpenGrace, of webhook secrets no
// receiver serves and of the shards whose sessions are attached but not
// opened: without READY nothing is counted.
func (p *Plugin) warnUnopened(ctx context.Context) {
	if clock.Sleep(ctx, p.opts.clock, discord.OpenGrace) != nil {
		return
	}
	p.warnUnmounted()
	p.mu.Lock()
	sessions := slices.Clone(p.sessions)
	p.mu.Unlock()
	discord.WarnUnopened(ctx, p.log, sessions)
}

// supervise runs jobs until ctx is done and every one returned; one that no
// restart mends stops the others, and its error is returned.
func (p *Plugin) supervise(ctx context.Context, jobs []job) error {
	group := pool.New().WithErrors().WithContext(ctx).WithCancelOnError()
	for _, j := range jobs {
		group.Go(func(ctx context.Context) error { return p.sup.run(ctx, j.name, j.run) })
	}
	return group.Wait()
}

// begin marks the plugin running, or says why it cannot run.
func (p *Plugin) begin() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return errRunning
	}
	if len(p.sessions) == 0 && (p.poster != nil || p.commands != nil) {
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

// jobs lists the jobs of one Run: the leader-only ones (lead) and, in a fleet,
// those every process runs (every: its shards' report, the votes mirror for Active).
func (p *Plugin) jobs() []job {
	var every, lead []job
	if p.report != nil {
		every = append(every, job{"fleet reporter", p.report})
	}
	if p.votes != nil {
		every = append(every, job{"votes mirror", p.withPoller(p.votes.Mirror)})
		lead = append(lead, job{"votes", p.withPoller(p.votes.Run)})
	}
	if p.commands != nil {
		lead = append(lead, job{"commands", p.commands.Run})
	}
	if p.poster != nil {
		lead = append(lead, job{"autopost", p.poster.Run})
	}
	return p.opts.leader.jobs(lead, every, p.supervise, p.leading)
}

// withPoller makes the poller answer Active from the start of run.
func (p *Plugin) withPoller(run func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		p.poller.Store(p.votes)
		return run(ctx)
	}
}

// newPoller builds the vote poller on store with the plugin's settings.
func (p *Plugin) newPoller(store voterewards.Store) (*voterewards.Poller, error) {
	return voterewards.New(p.client, voterewards.Config{
		OnReward:    p.watchOrigin(p.opts.onReward),
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

// Active reports from memory whether the user (a Discord or Top.gg id) has an active
// vote; Status.Covered is false until the poller read the vote window, and while it is off.
func (p *Plugin) Active(userID string) voterewards.Status {
	if poller := p.poller.Load(); poller != nil {
		return poller.Active(userID)
	}
	return voterewards.Status{}
}

// Format describes the Plugin under every verb (and so in slog) by its
// attached shards, never their sessions, which hold the bot token.
func (p *Plugin) Format(f fmt.State, _ rune) {
	if p == nil || p.firstReady == nil {
		fmt.Fprint(f, "plugin.Plugin(not made by plugin.New)")
		return
	}
	p.mu.Lock()
	ids := make([]int, len(p.sessions))
	for i, s := range p.sessions {
		ids[i] = s.ShardID
	}
	p.mu.Unlock()
	fmt.Fprintf(f, "plugin.Plugin{shards attached: %v, webhooks: %t}", ids, p.hook != nil)
}
