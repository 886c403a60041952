package fleet

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
)

// errPartitioned is what a partitioned client's commands fail with.
var errPartitioned = errors.New("test: partitioned from Redis")

// partition is a go-redis hook that fails every command while cut is set: a
// network partition between one process and Redis.
type partition struct{ cut atomic.Bool }

func (p *partition) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if p.cut.Load() {
			return nil, errPartitioned
		}
		return next(ctx, network, addr)
	}
}

func (p *partition) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if p.cut.Load() {
			cmd.SetErr(errPartitioned)
			return errPartitioned
		}
		return next(ctx, cmd)
	}
}

func (p *partition) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if p.cut.Load() {
			for _, c := range cmds {
				c.SetErr(errPartitioned)
			}
			return errPartitioned
		}
		return next(ctx, cmds)
	}
}

// contender is one process campaigning for the lease in a test.
type contender struct {
	lease *Lease
	rdb   *redis.Client
	part  *partition
	log   *testlog.Buffer
	done  chan error
	stop  context.CancelFunc
}

// newClient returns a client of addr with its own pool (a separate process).
func newClient(t testing.TB, addr string) *redis.Client { return redistest.ClientOf(t, addr) }

// startContender makes a lease on its own client and runs it with fn until
// the test ends (or stop is called).
func startContender(t *testing.T, addr, bot string, cfg LeaseConfig, fn func(context.Context, int64) error) *contender {
	t.Helper()
	c := &contender{rdb: newClient(t, addr), part: &partition{}, log: &testlog.Buffer{}, done: make(chan error, 1)}
	c.rdb.AddHook(c.part)
	cfg.Logger = c.log.Logger()
	var err error
	c.lease, err = NewLease(c.rdb, bot, cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	go func() { c.done <- c.lease.Run(ctx, fn) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-c.done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("Lease.Run did not return within 10s of cancel")
		}
	})
	return c
}

// stopAndWait stops a contender's Run and returns its result.
func (c *contender) stopAndWait(t *testing.T) error {
	t.Helper()
	c.stop()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Lease.Run did not return within 10s of cancel")
		return nil
	}
}

// blockUntilDone is a leader function that holds leadership until told otherwise.
func blockUntilDone(ctx context.Context, _ int64) error {
	<-ctx.Done()
	return nil
}

// leaders returns the contenders that currently say they lead.
func leaders(cs []*contender) []*contender {
	var out []*contender
	for _, c := range cs {
		if c.lease.State().Leader {
			out = append(out, c)
		}
	}
	return out
}
