package plugin

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/voterewards"
)

// localBackend is the backend of a bot in one process: it counts its own
// shards, keeps its state in Config.StateDir, and runs every job now.
type localBackend struct {
	dir   string
	state *runStore // nil unless the votes are kept in dir
}

func (b *localBackend) source(local *autopost.Counter) (autopost.Source, error) { return local, nil }

func (b *localBackend) hashes() commands.HashStore {
	return commands.NewFileHashStore(filepath.Join(b.dir, "commands.sha256"))
}

func (b *localBackend) votes() voterewards.Store {
	b.state = &runStore{}
	return b.state
}

// open opens the bbolt vote state for one Run (another process holding it
// fails with voterewards.ErrLocked), so that it is closed between Runs.
func (b *localBackend) open() (func() error, error) {
	if b.state == nil {
		return func() error { return nil }, nil
	}
	s, err := voterewards.OpenStore(b.dir)
	if err != nil {
		return nil, err
	}
	b.state.cur.Store(s)
	return func() error {
		b.state.cur.Store(nil)
		return s.Close()
	}, nil
}

func (b *localBackend) jobs(_ *Plugin, leader []job) []job { return leader }

// errStateClosed is what the vote state answers between two Runs; the
// plugin calls it only while a Run has it open.
var errStateClosed = errors.New("plugin: the vote state is open only while Run runs")

// runStore is the vote store of one process: the bbolt store of the Run
// under way. The poller is built once, in New, on it.
type runStore struct {
	cur atomic.Pointer[voterewards.BoltStore]
}

var _ voterewards.Store = (*runStore)(nil)

// use calls f with the store of the Run under way.
func use[T any](r *runStore, f func(*voterewards.BoltStore) (T, error)) (T, error) {
	if s := r.cur.Load(); s != nil {
		return f(s)
	}
	var zero T
	return zero, errStateClosed
}

// done is use for a method that returns only an error.
func done(r *runStore, f func(*voterewards.BoltStore) error) error {
	_, err := use(r, func(s *voterewards.BoltStore) (struct{}, error) { return struct{}{}, f(s) })
	return err
}

func (r *runStore) Load(ctx context.Context) (*voterewards.Snapshot, error) {
	return use(r, func(s *voterewards.BoltStore) (*voterewards.Snapshot, error) { return s.Load(ctx) })
}

func (r *runStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	return use(r, func(s *voterewards.BoltStore) ([]voterewards.Vote, error) { return s.Ingest(ctx, cp, votes, grace) })
}

func (r *runStore) Delivered(ctx context.Context, v voterewards.Vote, expire bool) error {
	return done(r, func(s *voterewards.BoltStore) error { return s.Delivered(ctx, v, expire) })
}

func (r *runStore) Expired(ctx context.Context, v voterewards.Vote) error {
	return done(r, func(s *voterewards.BoltStore) error { return s.Expired(ctx, v) })
}

func (r *runStore) Prune(ctx context.Context, createdBefore, now time.Time) error {
	return done(r, func(s *voterewards.BoltStore) error { return s.Prune(ctx, createdBefore, now) })
}

func (r *runStore) Stats(ctx context.Context, user string) (voterewards.Stats, error) {
	return use(r, func(s *voterewards.BoltStore) (voterewards.Stats, error) { return s.Stats(ctx, user) })
}

func (r *runStore) Leaderboard(ctx context.Context, month time.Time, n int) ([]voterewards.Standing, error) {
	return use(r, func(s *voterewards.BoltStore) ([]voterewards.Standing, error) { return s.Leaderboard(ctx, month, n) })
}
