package plugin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

// crashLoop is how many failures in a row make a job dead for liveness.
const crashLoop = 5

// jobStates is what the supervisor tells liveness: per job, the failures in a
// row and whether it runs, and the failure that ended the last Run.
type jobStates struct {
	clock clock.Clock

	mu     sync.Mutex
	jobs   map[string]jobState
	failed error // the permanent failure that ended the last Run; nil otherwise
}

// jobState is one job's failures in a row, and since when it runs, if it does.
type jobState struct {
	failures int
	running  bool
	started  time.Time
}

// set records the state of a job: at each start, and at each stop.
func (s *jobStates) set(name string, j jobState) { s.locked(func() { s.jobs[name] = j }) }

// locked runs f under s.mu.
func (s *jobStates) locked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// begin forgets the jobs of the last Run; end records how Run ended.
func (s *jobStates) begin()        { s.locked(func() { s.jobs, s.failed = map[string]jobState{}, nil }) }
func (s *jobStates) end(err error) { s.locked(func() { s.failed = err }) }

// check fails when the last Run ended with a failure no restart mends, or a
// job failed crashLoop times in a row and has not run well since.
func (s *jobStates) check(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return fmt.Errorf("the plugin stopped: %w", s.failed)
	}
	now := s.clock.Now()
	for name, j := range s.jobs {
		if j.failures >= crashLoop && (!j.running || now.Sub(j.started) < maxRestartDelay) {
			return fmt.Errorf("job %s failed %d times in a row", name, j.failures)
		}
	}
	return nil
}

// LivenessChecks returns the liveness probe's check "jobs": it fails when Run
// ended on a failure no restart mends, or a job keeps failing.
func (p *Plugin) LivenessChecks() []health.Check {
	return []health.Check{{Name: "jobs", Func: p.states.check}}
}

// ReadinessChecks returns the readiness probe's checks: "running", "shards" (all
// READY), "token" (not refused), "state" (takes a write) and, in a fleet, "leadership".
func (p *Plugin) ReadinessChecks() []health.Check {
	checks := []health.Check{{Name: "running", Func: p.checkRunning}}
	if p.poster != nil {
		checks = append(checks, health.Check{Name: "shards", Func: p.checkShards})
	}
	checks = append(checks, health.Check{Name: "token", Func: p.checkToken})
	if p.opts.state != nil {
		checks = append(checks, health.Check{Name: "state", Func: p.opts.state.Ping})
	}
	return append(checks, p.opts.leader.checks()...)
}

func (p *Plugin) checkRunning(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return errors.New("the plugin is not running")
	}
	return nil
}

func (p *Plugin) checkShards(context.Context) error {
	shards := p.counter.AppendShards(nil)
	if len(shards) == 0 {
		return errors.New("no shard attached")
	}
	var waiting []int
	for _, s := range shards {
		if !s.Ready {
			waiting = append(waiting, s.ID)
		}
	}
	if len(waiting) > 0 {
		return fmt.Errorf("shards without READY: %v", waiting)
	}
	return nil
}

// checkToken says what to check, never the service's whole answer.
func (p *Plugin) checkToken(context.Context) error {
	err := p.client.TokenRefused()
	if err == nil {
		return nil
	}
	status, hint := 0, ""
	if api, ok := errors.AsType[*topgg.APIError](err); ok {
		status, hint = api.StatusCode, api.Hint
	}
	msg := fmt.Sprintf("Top.gg refused the token (%d): check that it is the project's current API token", status)
	if hint != "" {
		msg += "; " + hint
	}
	return errors.New(msg)
}
