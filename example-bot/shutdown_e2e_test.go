package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stallDiscord is a minimal Discord for the startup tests: it answers the
// calls the bot makes before it opens its shards, except the one named by
// stall, which it holds (or rate-limits) until the bot gives up. Its gateway
// accepts the websocket and then says nothing, not even HELLO.
type stallDiscord struct {
	srv   *httptest.Server
	stall string // the path that stalls: see the constants below

	mu    sync.Mutex
	hits  map[string]int
	conns []*websocket.Conn
}

// What a stallDiscord holds.
const (
	stallApplication   = "/api/v9/oauth2/applications/@me" // no answer
	limitApplication   = "429 " + stallApplication         // 429, retry after a minute
	stallGatewayLookup = "/api/v9/gateway"                 // no answer
	limitGatewayLookup = "429 " + stallGatewayLookup       // 429, retry after a minute
	stallGateway       = "/ws/"                            // upgraded, then silence (discordgo adds the slash)
)

func newStallDiscord(t *testing.T, stall string) *stallDiscord {
	d := &stallDiscord{stall: stall, hits: map[string]int{}}
	hold := func(w http.ResponseWriter, r *http.Request) bool {
		switch d.stall {
		case r.URL.Path:
			<-r.Context().Done() // the bot dropped the request
			return true
		case "429 " + r.URL.Path:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"message":"You are being rate limited.","retry_after":60,"global":false}`)
			return true
		}
		return false
	}
	const appID = "1100000000000000001"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v9/oauth2/applications/@me", func(w http.ResponseWriter, r *http.Request) {
		d.hit(r)
		if !hold(w, r) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"`+appID+`","name":"stub"}`)
		}
	})
	mux.HandleFunc("PUT /api/v9/applications/{app}/commands", func(w http.ResponseWriter, r *http.Request) {
		d.hit(r)
		assert.Equal(t, appID, r.PathValue("app"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, io.LimitReader(r.Body, 1<<20)) // the commands, as registered
	})
	mux.HandleFunc("GET /api/v9/gateway", func(w http.ResponseWriter, r *http.Request) {
		d.hit(r)
		if !hold(w, r) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"url": "ws://" + r.Host + stallGateway})
		}
	})
	up := websocket.Upgrader{}
	mux.HandleFunc("GET "+stallGateway, func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if !assert.NoError(t, err) {
			return
		}
		d.mu.Lock()
		d.conns = append(d.conns, c)
		d.mu.Unlock()
		d.hit(r)
		for { // silence: read until the bot goes
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected call %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	d.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		// Hijacked connections are not closed by httptest.
		d.mu.Lock()
		for _, c := range d.conns {
			_ = c.Close()
		}
		d.mu.Unlock()
		d.srv.Close()
	})
	return d
}

func (d *stallDiscord) hit(r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hits[r.URL.Path]++
}

// reached reports whether the bot has reached the stalled call.
func (d *stallDiscord) reached() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hits[strings.TrimPrefix(d.stall, "429 ")] > 0
}

// TestE2ESIGTERMDuringStartup: SIGTERM while the bot waits on Discord during
// its start (the application read, the gateway lookup, the gateway's HELLO,
// each silent or rate-limited for a minute) exits 0 at once, not after a
// client timeout, a rate-limit sleep, or never.
func TestE2ESIGTERMDuringStartup(t *testing.T) {
	if testing.Short() || botBinary == "" {
		t.Skip("end-to-end test: runs the built bot (not with -short)")
	}
	t.Parallel()
	for _, tc := range []struct{ name, stall string }{
		{"application read silent", stallApplication},
		{"application read rate-limited", limitApplication},
		{"gateway lookup silent", stallGatewayLookup},
		{"gateway lookup rate-limited", limitGatewayLookup},
		{"gateway silent", stallGateway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t)
			d := newStallDiscord(t, tc.stall)
			e.env["DISCORD_API_URL"] = d.srv.URL + "/api/v9"
			bot := e.startBot()
			require.Eventually(t, func() bool { return d.reached() || bot.exited() }, wait, tick)
			require.False(t, bot.exited(), "the bot stopped on its own; stderr:\n%s", bot.stderr.String())

			bot.terminate() // within 10 s: sooner than the client timeout (20 s) or the rate limit (60 s)
			assert.Zero(t, bot.countMsg("bot is online"))
			assert.Equal(t, 1, bot.countMsg("bot stopped"))
		})
	}
}

// TestE2ESIGTERMDuringReward: SIGTERM while a reward handler waits on a role
// request that Discord never answers: the handler gets the plugin's close
// timeout, then is cancelled; the shards are closed and the bot exits 0
// within 10 s.
func TestE2ESIGTERMDuringReward(t *testing.T) {
	e := newE2E(t)
	arrived := e.slowRoles(time.Hour)
	e.tg.AddVote(makeVotes(3)...)
	bot := e.startBot()
	bot.waitMsg("bot is online")
	require.Eventually(t, func() bool { return arrived() > 0 }, wait, tick, "no role request reached Discord")

	bot.terminate()
	assert.Equal(t, 1, bot.countMsg("gateway connections closed"), "the shards were not closed")
	assert.Zero(t, bot.countMsg("vote rewarded: role given"))
	assert.Empty(t, e.dc.RoleChanges())
}

// TestE2ESecondSignalKills: a second SIGTERM during a slow shutdown (a role
// request that never ends) kills the process at once, as it would any
// program: the first one asked for a clean stop, the second insists.
func TestE2ESecondSignalKills(t *testing.T) {
	e := newE2E(t)
	arrived := e.slowRoles(time.Hour)
	e.tg.AddVote(makeVotes(1)...)
	bot := e.startBot()
	bot.waitMsg("bot is online")
	require.Eventually(t, func() bool { return arrived() > 0 }, wait, tick, "no role request reached Discord")

	require.NoError(t, bot.cmd.Process.Signal(syscall.SIGTERM))
	bot.waitMsg("shutting down")
	// The shutdown now waits seconds for the reward handler. Insist until the
	// process goes (the first insistence may come before the default handling
	// of SIGTERM is back).
	require.Eventually(t, func() bool {
		if bot.exited() {
			return true
		}
		_ = bot.cmd.Process.Signal(syscall.SIGTERM)
		return false
	}, 10*time.Second, 50*time.Millisecond)
	var ee *exec.ExitError
	require.True(t, errors.As(bot.err, &ee), "exit: %v", bot.err)
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.True(t, ws.Signaled(), "the second SIGTERM did not kill the bot: %v; stderr:\n%s", bot.err, bot.stderr.String())
	assert.Equal(t, syscall.SIGTERM, ws.Signal())
}

// TestShutdownBounds: a reward handler that honours its context is cancelled
// early enough for the shards to close within the budget, and the budget
// leaves the process time to exit within the 10 s SIGTERM allows.
func TestShutdownBounds(t *testing.T) {
	t.Parallel()
	const discordgoClose = time.Second // discordgo's Close sleeps a second
	assert.Less(t, pluginCloseTimeout, jobsFirst)
	assert.LessOrEqual(t, jobsFirst+discordgoClose, shutdownBudget-time.Second, "no margin for the shards")
	assert.LessOrEqual(t, shutdownBudget, 9*time.Second)
}
