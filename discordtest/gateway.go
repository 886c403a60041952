package discordtest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

const (
	gatewayPath     = "/gateway/" // GET /gateway hands out ws://host:port + gatewayPath
	maxGatewayFrame = 1 << 20     // bounds one client frame
	maxBacklog      = 4096        // dispatches a session keeps for RESUME
	writeTimeout    = 5 * time.Second
	// drainTimeout is how long a refused connection waits for the client to
	// close after the close frame, so the client reads the code, not a reset.
	drainTimeout = time.Second
)

// Gateway opcodes (https://discord.com/developers/docs/topics/opcodes-and-status-codes).
const (
	opDispatch            = 0
	opHeartbeat           = 1
	opIdentify            = 2
	opPresenceUpdate      = 3
	opVoiceStateUpdate    = 4
	opResume              = 6
	opRequestGuildMembers = 8
	opInvalidSession      = 9
	opHello               = 10
	opHeartbeatACK        = 11
)

// outFrame is a gateway payload sent; s and t are null except in dispatches.
type outFrame struct {
	Op int     `json:"op"`
	D  any     `json:"d"`
	S  *int64  `json:"s"`
	T  *string `json:"t"`
}

// inFrame is a gateway payload received from the client.
type inFrame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
}

// authData is the d of an IDENTIFY (Token, Shard) or a RESUME (the others).
type authData struct {
	Token     string  `json:"token"`
	Shard     *[2]int `json:"shard"`
	SessionID string  `json:"session_id"`
	Seq       int64   `json:"seq"`
}

// gwConn is one websocket connection; session is only touched by the
// connection's own handler goroutine.
type gwConn struct {
	ws        *websocket.Conn
	writeMu   sync.Mutex
	closeOnce sync.Once
	session   *gwSession
}

// write sends one text frame within writeTimeout or the context's earlier
// deadline; a cancellation alone does not interrupt it.
func (c *gwConn) write(ctx context.Context, b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	deadline := time.Now().Add(writeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.ws.SetWriteDeadline(deadline)
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// send writes a payload that is not a dispatch.
func (c *gwConn) send(ctx context.Context, op int, d any) error {
	b, _ := json.Marshal(outFrame{Op: op, D: d}) // maps and bools only
	return c.write(ctx, b)
}

// closeWith sends a close frame, waits up to drain for the client to close
// its end (only the connection's handler goroutine reads), and closes the
// socket; from any goroutine with drain 0.
func (c *gwConn) closeWith(code int, text string, drain time.Duration) {
	c.closeOnce.Do(func() {
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text),
			time.Now().Add(time.Second))
		_ = c.ws.SetReadDeadline(time.Now().Add(drain))
		for drain > 0 {
			if _, _, err := c.ws.ReadMessage(); err != nil {
				break
			}
		}
		_ = c.ws.Close()
	})
}

// reject closes the connection with a gateway close code, which the client
// reads rather than a reset, and returns false. Only the handler goroutine calls it.
func (c *gwConn) reject(code int, text string) bool {
	c.closeWith(code, text, drainTimeout)
	return false
}

// gwSession is a gateway session: created by IDENTIFY, continued by RESUME
// on a new connection. mu serialises dispatches (sequence numbers follow the
// wire order) and guards seq and backlog; conn is written with s.mu and mu
// held, so either is enough to read it; ready is guarded by s.mu.
type gwSession struct {
	id    string
	shard [2]int

	ready bool
	conn  *gwConn

	mu      sync.Mutex
	seq     int64
	backlog [][]byte // the last dispatches sent, up to seq, for RESUME
}

// dispatchLocked sends one dispatch with the next sequence number and keeps
// it for RESUME; a failed write closes the connection. The caller holds sess.mu.
func (sess *gwSession) dispatchLocked(ctx context.Context, typ string, d any) error {
	seq := sess.seq + 1
	b, err := json.Marshal(outFrame{Op: opDispatch, D: d, S: &seq, T: &typ})
	if err != nil {
		return fmt.Errorf("discordtest: encode %s: %w", typ, err)
	}
	sess.seq = seq
	sess.backlog = append(sess.backlog, b)
	if len(sess.backlog) > 2*maxBacklog {
		sess.backlog = slices.Clone(sess.backlog[len(sess.backlog)-maxBacklog:])
	}
	if sess.conn == nil {
		return nil
	}
	if err := sess.conn.write(ctx, b); err != nil {
		_ = sess.conn.ws.Close()
		return fmt.Errorf("discordtest: send %s to shard %d: %w", typ, sess.shard[0], err)
	}
	return nil
}

func (sess *gwSession) dispatch(ctx context.Context, typ string, d any) error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.dispatchLocked(ctx, typ, d)
}

// framesAfterLocked returns the dispatches a client that saw seq has missed,
// or false if the backlog no longer holds them. The caller holds sess.mu.
func (sess *gwSession) framesAfterLocked(seq int64) ([][]byte, bool) {
	first := sess.seq + 1 - int64(len(sess.backlog)) // the backlog is contiguous
	if seq < first-1 || seq > sess.seq {
		return nil, false
	}
	return slices.Clone(sess.backlog[seq+1-first:]), true
}

func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "server closed", http.StatusServiceUnavailable)
		return
	}
	s.wsWG.Add(1)
	s.mu.Unlock()
	defer s.wsWG.Done()

	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &gwConn{ws: ws}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer s.forgetConn(c)

	ws.SetReadLimit(maxGatewayFrame)
	s.runGateway(c, r.URL.Query().Get("v"), r.URL.Query().Get("encoding"))
}

func (s *Server) forgetConn(c *gwConn) {
	s.mu.Lock()
	delete(s.conns, c)
	if sess := c.session; sess != nil {
		sess.mu.Lock()
		if sess.conn == c {
			sess.conn = nil
		}
		sess.mu.Unlock()
		s.notifyLocked()
	}
	s.mu.Unlock()
	_ = c.ws.Close()
}

// runGateway is the read loop of one connection: HELLO, then client ops.
func (s *Server) runGateway(c *gwConn, v, encoding string) {
	ctx := context.Background() // writes are bounded by writeTimeout
	version := 10
	if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 9 || n > 10 {
			c.reject(4012, "Invalid API version.")
			return
		}
		version = n
	}
	if encoding != "" && encoding != "json" {
		c.reject(4002, "Decode error.")
		return
	}
	hello := map[string]any{"heartbeat_interval": s.cfg.heartbeat.Milliseconds(), "_trace": []string{"discordtest"}}
	if c.send(ctx, opHello, hello) != nil {
		return
	}
	for {
		mt, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var f inFrame
		if mt != websocket.TextMessage || json.Unmarshal(data, &f) != nil {
			c.reject(4002, "Decode error.")
			return
		}
		if !s.handleOp(ctx, c, f, version) {
			return
		}
	}
}

// handleOp answers one client frame. It reports whether the connection goes on.
func (s *Server) handleOp(ctx context.Context, c *gwConn, f inFrame, version int) bool {
	switch f.Op {
	case opHeartbeat:
		s.mu.Lock()
		s.heartbeats++
		s.mu.Unlock()
		return c.send(ctx, opHeartbeatACK, nil) == nil
	case opIdentify, opResume:
		if c.session != nil {
			return c.reject(4005, "Already authenticated.")
		}
		var d authData
		switch {
		case json.Unmarshal(f.D, &d) != nil:
			return c.reject(4002, "Decode error.")
		case !s.authorized("Bot " + strings.TrimPrefix(d.Token, "Bot ")):
			return c.reject(4004, "Authentication failed.")
		case f.Op == opResume:
			return s.resume(ctx, c, d)
		}
		return s.identify(ctx, c, d.Shard, version)
	case opPresenceUpdate, opVoiceStateUpdate, opRequestGuildMembers:
		// Accepted and ignored: the fake has no presences, voice or members.
		return c.session != nil || c.reject(4003, "Not authenticated.")
	}
	return c.reject(4001, "Unknown opcode.")
}

// identify starts a session for an authorized IDENTIFY and sends READY and
// the shard's GUILD_CREATEs. It reports whether the connection goes on.
func (s *Server) identify(ctx context.Context, c *gwConn, asked *[2]int, version int) bool {
	shard, ok := s.checkShard(c, asked)
	if !ok {
		return false
	}
	sess := &gwSession{id: rand.Text(), shard: shard}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	ids := s.shardGuildIDsLocked(shard[0])
	stubs := make([]map[string]any, len(ids))
	var creates []map[string]any
	for i, id := range ids {
		stubs[i] = map[string]any{"id": id, "unavailable": true}
		if g := s.guilds[id]; !g.unavailable {
			creates = append(creates, s.guildPayloadLocked(g))
		}
	}
	ready := map[string]any{
		"v": version, "user": s.botUser(), "guilds": stubs, "session_id": sess.id,
		"resume_gateway_url": s.gatewayURL(), "shard": shard, "application": map[string]any{"id": s.cfg.appID},
	}
	s.sessions[sess.id] = sess
	s.live[shard[0]] = sess
	// Taking sess.mu before anyone can see the session puts every later
	// event of the shard after READY and the GUILD_CREATEs.
	sess.mu.Lock()
	sess.conn = c
	c.session = sess
	s.mu.Unlock()

	err := sess.dispatchLocked(ctx, "READY", ready)
	for _, g := range creates {
		if err != nil {
			break
		}
		err = sess.dispatchLocked(ctx, "GUILD_CREATE", g)
	}
	sess.mu.Unlock()
	return s.markReady(sess, err)
}

// markReady marks sess ready once its first events were sent (err nil) and
// reports whether the connection goes on.
func (s *Server) markReady(sess *gwSession, err error) bool {
	if err != nil {
		return false
	}
	s.mu.Lock()
	sess.ready = true
	s.notifyLocked()
	s.mu.Unlock()
	return true
}

// checkShard returns the shard an IDENTIFY asks for ([0, 1] when none); it
// refuses the connection and reports false when the Server does not run it.
func (s *Server) checkShard(c *gwConn, asked *[2]int) ([2]int, bool) {
	shard := [2]int{0, 1}
	if asked != nil {
		shard = *asked
	}
	switch {
	case shard[1] < 1 || shard[0] < 0 || shard[0] >= shard[1]:
		return shard, c.reject(4010, "Invalid shard.")
	case shard[1] < s.cfg.shardCount:
		return shard, c.reject(4011, "Sharding required.")
	case shard[1] != s.cfg.shardCount:
		return shard, c.reject(4010, "Invalid shard.")
	}
	return shard, true
}

// resume continues a session on this connection: the missed dispatches, then
// RESUMED, or INVALID_SESSION when they are gone. It reports whether the
// connection goes on.
func (s *Server) resume(ctx context.Context, c *gwConn, d authData) bool {
	s.mu.Lock()
	sess := s.sessions[d.SessionID]
	if s.closed || sess == nil {
		s.mu.Unlock()
		return c.send(ctx, opInvalidSession, false) == nil
	}
	sess.mu.Lock()
	replay, ok := sess.framesAfterLocked(d.Seq)
	if !ok {
		sess.mu.Unlock()
		s.mu.Unlock()
		return c.send(ctx, opInvalidSession, false) == nil
	}
	old := sess.conn
	sess.conn = c
	c.session = sess
	s.live[sess.shard[0]] = sess
	s.mu.Unlock()

	var err error
	for _, b := range replay {
		if err = c.write(ctx, b); err != nil {
			break
		}
	}
	if err == nil {
		err = sess.dispatchLocked(ctx, "RESUMED", map[string]any{"_trace": []string{"discordtest"}})
	}
	sess.mu.Unlock()
	if old != nil && old != c {
		// The client gave up on the old connection; so does the server.
		_ = old.ws.Close()
	}
	return s.markReady(sess, err)
}

// connectedLocked returns the session that receives the events of shard
// (one still being sent READY too), or errShardNotConnected.
func (s *Server) connectedLocked(shard int) (*gwSession, error) {
	if s.closed {
		return nil, errClosed
	}
	sess := s.live[shard]
	if sess == nil || sess.conn == nil {
		return nil, fmt.Errorf("shard %d: %w", shard, errShardNotConnected)
	}
	return sess, nil
}

// CloseClientConnections closes every connection, REST and gateway, as a
// network failure would; a reconnecting session resumes with its events
// replayed.
func (s *Server) CloseClientConnections() {
	s.mu.Lock()
	conns := slices.Collect(maps.Keys(s.conns))
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.Close()
	}
	s.http.CloseClientConnections()
}
