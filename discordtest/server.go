package discordtest

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/internal/httpx"
)

// Server is a fake Discord: REST API and gateway on one 127.0.0.1 port. Its
// methods are safe for concurrent use; those that send gateway events take a
// context that bounds the write.
type Server struct {
	// URL is "http://127.0.0.1:port"; REST lives under URL+"/api/v9" (see APIBase).
	URL string

	cfg       config
	http      *httptest.Server
	addr      string // host:port of http
	transport *http.Transport
	upgrader  websocket.Upgrader
	wsWG      sync.WaitGroup // one per gateway connection handler
	started   time.Time
	done      chan struct{}    // closed by Close: ends the faults that hold requests
	faults    httpx.FaultQueue // has its own lock
	requests  httpx.Requests   // has its own lock

	mu           sync.Mutex
	closed       bool
	changed      chan struct{} // closed and replaced on every change, see notifyLocked
	lastID       uint64
	guilds       map[string]*guildState
	live         map[int]*gwSession    // shard ID -> session that receives its events
	sessions     map[string]*gwSession // by session ID, for RESUME
	conns        map[*gwConn]struct{}
	heartbeats   int
	commands     map[string][]*discordgo.ApplicationCommand // scope ("" global, else guild ID) -> commands
	roles        map[memberRole]struct{}
	roleChanges  []RoleChange
	interactions map[string]*interactionState
	dms          dmState
}

// NewServer starts a fake Discord on 127.0.0.1 (a free port). It fails only
// on an invalid option or if it cannot listen.
func NewServer(opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	cfg.appID = cmp.Or(cfg.appID, cfg.botID)
	s := &Server{
		cfg:          cfg,
		started:      time.Now().UTC(),
		changed:      make(chan struct{}),
		guilds:       make(map[string]*guildState),
		live:         make(map[int]*gwSession),
		sessions:     make(map[string]*gwSession),
		conns:        make(map[*gwConn]struct{}),
		commands:     make(map[string][]*discordgo.ApplicationCommand),
		roles:        make(map[memberRole]struct{}),
		interactions: make(map[string]*interactionState),
		done:         make(chan struct{}),
		dms: dmState{channels: map[string]string{}, owners: map[string]string{}, blocked: map[string]bool{},
			nonces: map[nonceKey]sentNonce{}},
	}
	for _, id := range cfg.guilds { // a duplicate is the same guild again
		v, _ := parseSnowflake(id) // checked by WithGuilds
		s.guilds[id] = &guildState{id: id, shard: discord.ShardOf(v, cfg.shardCount), joinedAt: s.started}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("discordtest: listen: %w", err)
	}
	s.addr = l.Addr().String()
	s.URL = "http://" + s.addr
	mux := http.NewServeMux()
	mux.HandleFunc(gatewayPath, s.serveGateway)
	mux.Handle("/", s.restHandler())
	// httptest.Server.Close waits for requests, not for hijacked websocket
	// handlers: wsWG does.
	s.http = &httptest.Server{Listener: l, Config: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}}
	s.http.Start()
	s.transport = &http.Transport{
		DialContext:         s.dialOnlyHere,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
	return s, nil
}

// APIBase returns the REST API root with a trailing slash,
// "http://127.0.0.1:port/api/v9/", the counterpart of discordgo.EndpointAPI.
func (s *Server) APIBase() string { return s.URL + "/api/v9/" }

// gatewayURL is the websocket URL that GET /gateway hands out.
func (s *Server) gatewayURL() string { return "ws://" + s.addr + gatewayPath }

// Token returns the bot token the Server accepts, without the "Bot " prefix.
func (s *Server) Token() string { return s.cfg.token }

// BotUserID returns the bot user's ID.
func (s *Server) BotUserID() string { return s.cfg.botID }

// ApplicationID returns the application ID.
func (s *Server) ApplicationID() string { return s.cfg.appID }

// ShardCount returns the shard count the Server expects.
func (s *Server) ShardCount() int { return s.cfg.shardCount }

// Close closes every gateway connection (close code 1001) and the HTTP server
// and waits for their goroutines (30 s at most: then it panics, naming the
// wait). Close discordgo sessions first. Close is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	conns := slices.Collect(maps.Keys(s.conns))
	s.notifyLocked()
	close(s.done)
	s.mu.Unlock()

	for _, c := range conns {
		c.closeWith(websocket.CloseGoingAway, "server closed", 0)
		_ = c.ws.Close() // also ends a refusal still waiting for its client
	}
	httpx.Within("discordtest: Close: the REST handlers and gateway connections to end", func() {
		s.http.Close()
		s.wsWG.Wait()
	})
	s.transport.CloseIdleConnections()
}

// notifyLocked wakes every waiter. The caller holds s.mu.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor blocks until cond (called with s.mu held) is true, the context is
// done or the Server is closed.
func (s *Server) waitFor(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok, closed, ch := cond(), s.closed, s.changed
		s.mu.Unlock()
		switch {
		case ok:
			return nil
		case closed:
			return errClosed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// ConnectedShards returns how many shards have a connected session that was
// sent READY (or RESUMED) and its GUILD_CREATEs.
func (s *Server) ConnectedShards() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connectedShardsLocked()
}

func (s *Server) connectedShardsLocked() int {
	n := 0
	for _, sess := range s.live {
		if sess.conn != nil && sess.ready {
			n++
		}
	}
	return n
}

// WaitConnected blocks until at least n shards are connected (see
// ConnectedShards), the context is done or the Server is closed.
// The events sent may still be in flight: wait for them with handlers.
func (s *Server) WaitConnected(ctx context.Context, n int) error {
	if err := s.waitFor(ctx, func() bool { return s.connectedShardsLocked() >= n }); err != nil {
		return fmt.Errorf("discordtest: wait for %d connected shards: %w", n, err)
	}
	return nil
}
