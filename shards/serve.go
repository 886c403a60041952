package shards

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
)

// Shutdown bounds the stop of [Group.Serve]. A process has about 10 s after
// SIGTERM; discordgo's Close takes a second.
type Shutdown struct {
	// JobsFirst is how long the shards stay open for the job to stop (a
	// post or a role grant in flight needs them). Default 5 s.
	JobsFirst time.Duration
	// Budget bounds the whole stop. Default 8 s.
	Budget time.Duration
}

// Bounds of a zero Shutdown.
const (
	defaultJobsFirst = 5 * time.Second
	defaultBudget    = 8 * time.Second
)

// Serve opens the shards and runs job beside them until ctx is done or job
// returns, then stops job and closes the shards (after s.JobsFirst at most). It
// returns within s.Budget with the errors of Open, job and Close, or one naming
// the step still running. A Group serves once.
func (g *Group) Serve(ctx context.Context, job func(context.Context) error, s Shutdown) error {
	if ctx == nil || job == nil {
		return errors.New("shards: Serve: nil context or job")
	}
	if s.JobsFirst < 0 || s.Budget < 0 {
		return errors.New("shards: Serve: negative shutdown bound")
	}
	s.JobsFirst, s.Budget = cmp.Or(s.JobsFirst, defaultJobsFirst), cmp.Or(s.Budget, defaultBudget)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	online, jobFailed := context.WithCancel(ctx)
	defer jobFailed()
	ran := make(chan error, 1)
	go func() {
		err := job(runCtx)
		jobFailed()
		ran <- err
	}()
	log := g.cfg.logger
	openErr := g.Open(online)
	switch {
	case online.Err() != nil:
		// Open returned because of the stop (or a failed job, which the
		// stop reports): not a failure of its own.
		log.Info("stopped before going online; shutting down")
		openErr = nil
	case openErr == nil:
		log.Info("bot is online", "shards", fmt.Sprint(g))
		<-online.Done()
		log.Info("shutting down")
	}
	stopJob := func() error { stopRun(); return <-ran }
	closeShards := func() error {
		err := g.Close()
		log.Info("gateway connections closed")
		return err
	}
	return errors.Join(openErr, stopInOrder(stopJob, closeShards, s.Budget, s.JobsFirst))
}

// stopInOrder runs stopJob, then closeShards once the job has stopped or
// after jobsFirst, and returns within budget (see Serve).
func stopInOrder(stopJob, closeShards func() error, budget, jobsFirst time.Duration) error {
	deadline := time.After(budget)
	jobs, shards := make(chan error, 1), make(chan error, 1)
	go func() { jobs <- stopJob() }()
	select {
	case err := <-jobs:
		jobs <- err // read again below
	case <-time.After(jobsFirst):
	}
	go func() { shards <- closeShards() }()
	var errs [2]error
	for i, step := range []struct {
		done <-chan error
		late string
	}{{shards, "the shards did not close"}, {jobs, "the jobs did not stop"}} {
		select {
		case errs[i] = <-step.done:
		case <-deadline:
			return fmt.Errorf("shards: shutdown took longer than %s: %s", budget, step.late)
		}
	}
	return errors.Join(errs[1], errs[0])
}
