package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/fence"
	"github.com/dblkit/go-topgg/internal/typednil"
)

// defaultLeaseTTL is the lease time to live when Config.LeaseTTL is zero.
const defaultLeaseTTL = 15 * time.Second

// leaseConfig tunes a Lease: Config's lease settings.
type leaseConfig struct {
	// TTL is how long the lease lives in Redis without renewal (default 15 s,
	// at least 100 ms): a dead leader is replaced within about TTL.
	TTL      time.Duration
	Logger   *slog.Logger // default: slog.Default()
	OnChange func(LeaseState)
	clock    clock.Clock // tests inject a fake; default clock.Real()
}

// Lease elects one leader per bot among the processes that share a Redis,
// each term with a larger fencing token. Get it from [Fleet.Lease]; its methods
// are safe for concurrent use, and one Run may be going on at a time.
type Lease struct {
	panicked atomic.Bool // OnChange panicked once: its stack was logged
	// A key set with SET NX PX; renewal and release by Lua compare-and-set;
	// with replicas, an election or renewal counts once every replica acked it.
	rdb        redis.UniversalClient
	leaseKey   string
	fenceKey   string
	fences     func(token int64) Fence
	channel    string
	holder     string
	ttl        time.Duration
	renewEvery time.Duration
	margin     time.Duration
	log        *slog.Logger
	onChange   func(LeaseState)
	clock      clock.Clock

	running atomic.Bool
	mu      sync.Mutex
	state   LeaseState
}

// newLease returns the lease of bot (see [Key]) on rdb; it does not contact
// Redis. rdb should have ContextTimeoutEnabled, as [NewUniversalClient] sets, or Run
// may wait for a hung renewal up to the client's read timeout.
func newLease(rdb redis.UniversalClient, bot string, cfg leaseConfig) (*Lease, error) {
	if typednil.Is(rdb) {
		return nil, errNilClient
	}
	fences, err := fence.For(bot)
	if err != nil {
		return nil, err
	}
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	var id [12]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails (Go >= 1.24)
	l := &Lease{
		rdb:      rdb,
		leaseKey: Key(bot, "lease"), fenceKey: Key(bot, "fence"), fences: fences, channel: Key(bot, "lease:released"),
		holder: hex.EncodeToString(id[:]),
		ttl:    cfg.TTL, renewEvery: cfg.TTL / 3, margin: cfg.TTL / 5,
		log: cfg.Logger.With("component", "fleet.lease", "bot", bot), onChange: cfg.OnChange,
		clock: clock.Or(cfg.clock),
	}
	return l, nil
}

func (c *leaseConfig) fill() error {
	if c.TTL == 0 {
		c.TTL = defaultLeaseTTL
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.TTL < 100*time.Millisecond {
		return configError("fleet.Config.LeaseTTL", "%v is below 100ms", c.TTL)
	}
	return nil
}

// Fence returns the fence of the leader term of token, for fenced writes.
func (l *Lease) Fence(token int64) Fence { return l.fences(token) }

// Run campaigns for the lease until ctx is done, calling fn on each win with the
// term's fencing token and a context cancelled ([ErrLeaseLost]) before the lease
// can expire. After fn, it releases the lease and campaigns again, or returns
// nil once ctx is done, or fn's error wrapped. Redis errors are retried, never
// returned; a concurrent Run is [topgg.ErrRunning].
func (l *Lease) Run(ctx context.Context, fn func(ctx context.Context, token int64) error) error {
	if fn == nil {
		return errNilFunc
	}
	if !l.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer l.running.Store(false)
	defer l.setKnown(false)
	for {
		token, sent, ok := l.campaign(ctx)
		if !ok {
			return nil // ctx is done
		}
		if stop, err := l.lead(ctx, fn, token, sent); stop {
			return err
		}
	}
}

// lead runs one term: fn under a leader context kept alive by renewals, then
// the release. stop says whether Run should return (with err).
func (l *Lease) lead(ctx context.Context, fn func(context.Context, int64) error, token int64, sent time.Time) (stop bool, err error) {
	value := l.holder + ":" + fmt.Sprint(token)
	l.log.Info("became leader", "token", token)
	l.setState(true, token)

	leaderCtx, cancelLeader := context.WithCancelCause(ctx)
	t := l.term(sent, cancelLeader)
	leaderCtx = clock.WithTerm(leaderCtx, t)
	keepCtx, stopKeep := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { l.keep(keepCtx, t, value, sent) })

	ferr := fn(leaderCtx, token)
	lost := errors.Is(context.Cause(leaderCtx), ErrLeaseLost)
	stopKeep()
	wg.Wait()
	t.End(nil) // fn returned: a straggler of its work checks in vain
	cancelLeader(nil)

	l.setState(false, 0)
	l.release(ctx, value)
	switch {
	case ctx.Err() != nil:
		return true, nil
	case lost:
		if ferr != nil && !errors.Is(ferr, context.Canceled) {
			l.log.Warn("leader work ended with an error after the lease was lost", "token", token, "err", ferr)
		}
		l.log.Warn("lease lost; campaigning again", "token", token)
		return false, nil
	case ferr != nil:
		return true, fmt.Errorf("fleet: leader work (token %d): %w", token, ferr)
	default:
		return true, nil
	}
}

// release deletes our lease if it is still ours, with its own bounded
// context: it runs when ctx may already be done.
func (l *Lease) release(ctx context.Context, value string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.renewEvery)
	defer cancel()
	n, err := releaseScript.Run(rctx, l.rdb, []string{l.leaseKey}, value, l.channel).Int()
	switch {
	case err != nil:
		l.log.Warn("lease release failed; it expires by itself", "err", err)
	case n == 0:
		l.log.Debug("lease was no longer ours at release")
	}
}

// Format prints the Lease as "fleet.Lease" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*Lease) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "fleet.Lease") }
