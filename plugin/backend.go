package plugin

import (
	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/voterewards"
)

// backend is what differs between a bot in one process (backend_local.go)
// and one process of a fleet (backend_fleet.go). The plugin builds each job
// once, in New, over the stores its backend gives, and asks it per Run who
// runs them.
type backend interface {
	// source returns what the poster posts, given this process's Counter:
	// the Counter itself, or the fleet's total.
	source(local *autopost.Counter) (autopost.Source, error)
	// hashes returns where the last published command hash is kept: a file
	// in the state directory, or Redis (its writes fenced by the lease).
	hashes() commands.HashStore
	// votes returns the vote store when [WithVoteStore] gave none: the bbolt
	// file of the state directory (opened by open, per Run), or Redis.
	votes() voterewards.Store
	// open prepares the state of one Run and returns what closes it.
	open() (close func() error, err error)
	// jobs returns this process's jobs of one Run, given the leader-only
	// ones (votes, commands, autopost): one process runs them now; a fleet
	// process runs them only while it holds the lease, beside the jobs
	// every process runs. It is the one place a leader's term starts and
	// ends.
	jobs(p *Plugin, leader []job) []job
}
