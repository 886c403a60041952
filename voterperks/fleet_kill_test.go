package voterperks_test

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestFleetLeaderKilledAtTheDueTime: the fleet's leader is another process
// (this test binary, run as a child), killed with SIGKILL at the moment a
// vote expires: no release of the lease, no grace, whatever it was doing cut
// short. A process of this one takes over once the lease expires, delivers
// the expiry, and the voter gets exactly one reminder and loses the role.
func TestFleetLeaderKilledAtTheDueTime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	redistest.Require(t)
	t.Parallel()
	srv := redistest.Start(t)
	w := newWorld(t, 3)
	child, leads := startChild(t, w, srv.URL())
	select {
	case <-leads:
	case <-w.ctx().Done():
		t.Fatal("the child never led")
	}
	// This process runs shards 1 and 2 as two more processes of the fleet.
	cfg := w.config()
	var followers []*fleet.Fleet
	var state *redisstate.State // the first follower's
	for i := 1; i <= 2; i++ {
		p, f, s := w.fleetBot(srv.URL(), cfg, i)
		w.start(p)
		require.NoError(t, w.sessions[i].Open())
		followers = append(followers, f)
		if state == nil {
			state = s
		}
	}

	now := time.Now().UTC()
	alice := vote(1, now, 4*time.Second)
	on := true
	assert.Contains(t, w.interact(1, "vote", alice.PlatformID, &on).Content, "I will send you a direct message")
	w.tg.AddVote(alice)
	require.Eventually(t, func() bool { return len(w.dc.MemberRoles(w.guilds[0], alice.PlatformID)) == 1 }, wait, tick,
		"the leader never gave the role")
	select {
	case <-time.After(time.Until(alice.ExpiresAt)):
	case <-w.ctx().Done():
		t.Fatal("timed out")
	}
	require.NoError(t, child.Process.Kill())

	require.Eventually(t, func() bool {
		return slices.ContainsFunc(followers, func(f *fleet.Fleet) bool { return f.Lease().State().Leader })
	}, wait, tick, "no process took over")
	require.Eventually(t, func() bool {
		snap, err := state.Load(w.ctx())
		return err == nil && !slices.ContainsFunc(snap.Expiries, func(v voterewards.Vote) bool {
			return v.PlatformID == alice.PlatformID
		}) && len(w.dmsTo(alice.PlatformID)) > 0
	}, wait, tick, "alice's expiry was never handled")
	assert.Len(t, w.dmsTo(alice.PlatformID), 1, "one reminder per vote, whoever leads")
	assert.Empty(t, w.dc.MemberRoles(w.guilds[0], alice.PlatformID))
}

// startChild starts this test binary as the fleet's process of shard 0 and
// returns it and a channel closed once it leads. Its output is logged when
// the test fails; it is killed at the end of the test if still running.
func startChild(t *testing.T, w *world, redisURL string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childRedisEnv+"="+redisURL, childTopggEnv+"="+w.tg.URL,
		childTopggTok+"="+w.tg.Token(), childDiscordEnv+"="+w.dc.APIBase(), childDiscordTok+"="+w.dc.Token(),
		childBotEnv+"="+w.dc.ApplicationID(), childGuildEnv+"="+w.guilds[0])
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	leads := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "leader" {
				close(leads)
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		httpx.Within("the killed child process to exit", func() { <-read; _ = cmd.Wait() })
		if t.Failed() {
			t.Logf("child's stderr:\n%s", stderr.String())
		}
	})
	return cmd, leads
}
