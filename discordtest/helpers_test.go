package discordtest_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testkit"
)

// TestMain fails the package if any goroutine outlives the tests: every
// test closes its sessions and then its Server.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

const waitFor = 10 * time.Second

func newServer(t *testing.T, opts ...discordtest.Option) *discordtest.Server {
	t.Helper()
	srv, err := discordtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(srv.Close) // registered first, so it runs after the sessions' Close
	return srv
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

// readyInfo is what a test checks of READY, copied in the handler (the
// guild stubs are overwritten in place by discordgo's State afterwards).
type readyInfo struct {
	version   int
	sessionID string
	userID    string
	appID     string
	shard     [2]int
	stubs     []string
	allStubs  bool // every guild was {id, unavailable: true}
}

// recorder keeps the events a discordgo session handled, in order when the
// session has SyncEvents set.
type recorder struct {
	t           *testing.T
	log         testkit.Log[string] // "create:<id>", "delete:<id>", "outage:<id>", "resumed"
	readies     testkit.Log[readyInfo]
	seqs        testkit.Log[int64]
	connects    atomic.Int32
	disconnects atomic.Int32
}

func (r *recorder) add(entry string)        { r.log.Add(entry) }
func (r *recorder) snapshot() []string      { return r.log.All() }
func (r *recorder) readyInfos() []readyInfo { return r.readies.All() }
func (r *recorder) sequences() []int64      { return r.seqs.All() }
func (r *recorder) connectCount() int       { return int(r.connects.Load()) }
func (r *recorder) disconnectCount() int    { return int(r.disconnects.Load()) }

// waitLog waits until the log has n entries and returns them.
func (r *recorder) waitLog(n int) []string {
	r.t.Helper()
	require.Eventually(r.t, func() bool { return len(r.snapshot()) >= n }, waitFor, 5*time.Millisecond,
		"want %d events", n)
	return r.snapshot()
}

func (r *recorder) attach(s *discordgo.Session) {
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.Ready) {
		info := readyInfo{version: e.Version, sessionID: e.SessionID, allStubs: true}
		if e.User != nil {
			info.userID = e.User.ID
		}
		if e.Application != nil {
			info.appID = e.Application.ID
		}
		if e.Shard != nil {
			info.shard = *e.Shard
		}
		for _, g := range e.Guilds {
			info.stubs = append(info.stubs, g.ID)
			info.allStubs = info.allStubs && g.Unavailable && g.Name == ""
		}
		r.readies.Add(info)
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.GuildCreate) {
		assert.False(r.t, e.Unavailable, "GUILD_CREATE of an available guild")
		assert.Equal(r.t, "Guild "+e.ID, e.Name)
		assert.Positive(r.t, e.MemberCount)
		r.add("create:" + e.ID)
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.GuildDelete) {
		if e.Unavailable {
			r.add("outage:" + e.ID)
			return
		}
		r.add("delete:" + e.ID)
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) { r.add("resumed") })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.Event) { r.seqs.Add(e.Sequence) })
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Connect) { r.connects.Add(1) })
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) { r.disconnects.Add(1) })
}

// openSession opens a session for a shard with a recorder attached. With
// sync set, handlers run in order on discordgo's reading goroutine.
func openSession(t *testing.T, srv *discordtest.Server, shardID, shardCount int, sync bool,
	configure ...func(*discordgo.Session)) (*discordgo.Session, *recorder) {
	t.Helper()
	s, err := srv.NewSession(shardID, shardCount)
	require.NoError(t, err)
	s.SyncEvents = sync
	for _, f := range configure {
		f(s)
	}
	rec := &recorder{t: t}
	rec.attach(s)
	require.NoError(t, s.Open())
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s, rec
}

// closeAll closes sessions concurrently: each discordgo Close sleeps one
// second.
func closeAll(t *testing.T, sessions ...*discordgo.Session) {
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() { assert.NoError(t, s.Close()) })
	}
	httpx.Within("the sessions' Close", wg.Wait)
}

func creates(ids ...string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "create:" + id
	}
	return out
}
