package discordtest

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

const (
	// gatewayPath is where the websocket gateway is served; GET /gateway
	// returns ws://host:port + gatewayPath.
	gatewayPath = "/gateway/"
	// maxGatewayFrame bounds what a client may send in one frame (Discord
	// closes at 4096 bytes; discordgo's IDENTIFY is far below both).
	maxGatewayFrame = 1 << 20
	// maxBacklog is how many dispatches a session keeps for RESUME.
	maxBacklog = 4096
	// writeTimeout bounds one gateway write when the context has no
	// earlier deadline.
	writeTimeout = 5 * time.Second
	// drainTimeout is how long a refused connection waits for the client
	// to close after the close frame, so the frame is read before the socket
	// goes away.
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

// Gateway close codes the fake uses.
const (
	closeUnknownOpcode        = 4001
	closeDecodeError          = 4002
	closeNotAuthenticated     = 4003
	closeAuthenticationFailed = 4004
	closeAlreadyAuthenticated = 4005
	closeInvalidShard         = 4010
	closeShardingRequired     = 4011
	closeInvalidAPIVersion    = 4012
)

// outFrame is a gateway payload sent to the client; s and t are null except
// for dispatches, as on Discord.
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

type identifyData struct {
	Token string  `json:"token"`
	Shard *[2]int `json:"shard"`
}

type resumeData struct {
	Token     string `json:"token"`
	SessionID string `json:"session_id"`
	Seq       int64  `json:"seq"`
}

// gwConn is one websocket connection. Writes are serialised by writeMu;
// session is only touched by the connection's own handler goroutine.
type gwConn struct {
	ws        *websocket.Conn
	writeMu   sync.Mutex
	closeOnce sync.Once
	session   *gwSession
}

// write sends one text frame. The context's deadline, if earlier than
// writeTimeout, bounds the write; a cancellation alone does not interrupt
// it, since half a frame would break the connection.
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

func (c *gwConn) writeJSON(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("discordtest: encode gateway payload: %w", err)
	}
	return c.write(ctx, b)
}

// closeWith sends a close frame and closes the socket at once. Safe from
// any goroutine (WriteControl may run concurrently with a write).
func (c *gwConn) closeWith(code int, text string) {
	c.closeOnce.Do(func() {
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text),
			time.Now().Add(time.Second))
		_ = c.ws.Close()
	})
}

// reject sends a close frame and waits (bounded) for the client to close
// its end before closing the socket, so the client reads the close code
// rather than a reset. Only the connection's handler goroutine calls it.
func (c *gwConn) reject(code int, text string) {
	c.closeOnce.Do(func() {
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text),
			time.Now().Add(time.Second))
		_ = c.ws.SetReadDeadline(time.Now().Add(drainTimeout))
		for {
			if _, _, err := c.ws.ReadMessage(); err != nil {
				break
			}
		}
		_ = c.ws.Close()
	})
}

// sentFrame is a dispatch kept for replay on RESUME.
type sentFrame struct {
	seq  int64
	data []byte
}

// gwSession is a gateway session: created by IDENTIFY, continued by RESUME
// on a new connection. mu serialises dispatches (sequence numbers follow
// the wire order) and guards seq and backlog. conn is written with both
// s.mu and mu held, so either lock is enough to read it. ready is guarded
// by s.mu.
type gwSession struct {
	id    string
	shard [2]int

	ready bool
	conn  *gwConn

	mu      sync.Mutex
	seq     int64
	backlog []sentFrame
}

// dispatchLocked sends one dispatch (op 0) with the next sequence number and
// keeps it for RESUME. With no connection the event waits in the backlog.
// A failed write closes the connection, as a broken network would: the
// client reconnects and resumes. The caller holds sess.mu.
func (sess *gwSession) dispatchLocked(ctx context.Context, typ string, d any) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("discordtest: encode %s: %w", typ, err)
	}
	sess.seq++
	seq := sess.seq
	b, err := json.Marshal(outFrame{Op: opDispatch, D: json.RawMessage(raw), S: &seq, T: &typ})
	if err != nil {
		return fmt.Errorf("discordtest: encode %s: %w", typ, err)
	}
	sess.backlog = append(sess.backlog, sentFrame{seq: seq, data: b})
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

// dispatch is dispatchLocked taking sess.mu.
func (sess *gwSession) dispatch(ctx context.Context, typ string, d any) error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.dispatchLocked(ctx, typ, d)
}

// framesAfterLocked returns the dispatches a client that saw seq has missed,
// or false if the backlog no longer holds them. The caller holds sess.mu.
func (sess *gwSession) framesAfterLocked(seq int64) ([]sentFrame, bool) {
	if seq > sess.seq || seq < 0 {
		return nil, false
	}
	if seq == sess.seq {
		return nil, true
	}
	if len(sess.backlog) == 0 || sess.backlog[0].seq > seq+1 {
		return nil, false
	}
	i, _ := slices.BinarySearchFunc(sess.backlog, seq+1, func(f sentFrame, target int64) int {
		return int(f.seq - target)
	})
	return slices.Clone(sess.backlog[i:]), true
}

// serveGateway upgrades to a websocket and runs the gateway protocol until
// the connection ends.
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
		s.log.Debug("gateway upgrade failed", "err", err)
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

// forgetConn runs when a connection's handler ends.
func (s *Server) forgetConn(c *gwConn) {
	s.mu.Lock()
	delete(s.conns, c)
	if sess := c.session; sess != nil {
		sess.mu.Lock()
		if sess.conn == c {
			sess.conn = nil
			s.log.Debug("gateway disconnected", "shard", sess.shard[0])
		}
		sess.mu.Unlock()
		s.notifyLocked()
	}
	s.mu.Unlock()
	_ = c.ws.Close()
}

// runGateway is the read loop of one connection: HELLO, then client ops
// until the connection fails or is refused.
func (s *Server) runGateway(c *gwConn, v, encoding string) {
	ctx := context.Background() // writes are bounded by writeTimeout
	version, ok := c.checkQuery(v, encoding)
	if !ok {
		return
	}
	hello := map[string]any{
		"heartbeat_interval": s.cfg.heartbeat.Milliseconds(),
		"_trace":             []string{"discordtest"},
	}
	if err := c.writeJSON(ctx, outFrame{Op: opHello, D: hello}); err != nil {
		return
	}
	for {
		mt, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var f inFrame
		if mt != websocket.TextMessage || json.Unmarshal(data, &f) != nil {
			c.reject(closeDecodeError, "Decode error.")
			return
		}
		if !s.handleOp(ctx, c, f, version) {
			return
		}
	}
}

// checkQuery checks the gateway URL's v and encoding (empty when absent) and
// returns the API version; it refuses the connection and reports false when
// they are not supported.
func (c *gwConn) checkQuery(v, encoding string) (int, bool) {
	version := 10
	if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 9 || n > 10 {
			c.reject(closeInvalidAPIVersion, "Invalid API version.")
			return 0, false
		}
		version = n
	}
	if encoding != "" && encoding != "json" {
		c.reject(closeDecodeError, "Decode error.")
		return 0, false
	}
	return version, true
}

// handleOp answers one client frame. It reports whether the connection goes on.
func (s *Server) handleOp(ctx context.Context, c *gwConn, f inFrame, version int) bool {
	switch f.Op {
	case opHeartbeat:
		s.mu.Lock()
		s.heartbeats++
		s.mu.Unlock()
		return c.writeJSON(ctx, outFrame{Op: opHeartbeatACK}) == nil
	case opIdentify:
		if c.session != nil {
			c.reject(closeAlreadyAuthenticated, "Already authenticated.")
			return false
		}
		return s.identify(ctx, c, f.D, version)
	case opResume:
		if c.session != nil {
			c.reject(closeAlreadyAuthenticated, "Already authenticated.")
			return false
		}
		return s.resume(ctx, c, f.D)
	case opPresenceUpdate, opVoiceStateUpdate, opRequestGuildMembers:
		if c.session == nil {
			c.reject(closeNotAuthenticated, "Not authenticated.")
			return false
		}
		// Accepted and ignored: the fake has no presences, voice or members.
		return true
	default:
		c.reject(closeUnknownOpcode, "Unknown opcode.")
		return false
	}
}

// tokenOK reports whether a gateway token (with or without "Bot ") is the
// Server's token, in constant time.
func (s *Server) tokenOK(token string) bool {
	token = strings.TrimPrefix(token, "Bot ")
	return subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.token)) == 1
}

// identify checks an IDENTIFY, starts a session and sends READY and the
// shard's GUILD_CREATEs. It reports whether the connection goes on.
func (s *Server) identify(ctx context.Context, c *gwConn, raw json.RawMessage, version int) bool {
	var d identifyData
	if err := json.Unmarshal(raw, &d); err != nil {
		c.reject(closeDecodeError, "Decode error.")
		return false
	}
	if !s.tokenOK(d.Token) {
		s.log.Debug("gateway identify refused: authentication failed")
		c.reject(closeAuthenticationFailed, "Authentication failed.")
		return false
	}
	shard, ok := s.checkShard(c, d.Shard)
	if !ok {
		return false
	}

	sess := &gwSession{id: randomHex(16), shard: shard}
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
		"v":                  version,
		"user":               s.botUser(),
		"guilds":             stubs,
		"session_id":         sess.id,
		"session_type":       "normal",
		"resume_gateway_url": s.gatewayURL(),
		"shard":              shard,
		"application":        map[string]any{"id": s.cfg.appID, "flags": s.cfg.appFlags},
		"private_channels":   []any{},
		"relationships":      []any{},
		"presences":          []any{},
		"_trace":             []string{"discordtest"},
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
	if err != nil {
		s.log.Debug("gateway ready failed", "shard", shard[0], "err", err)
		return false
	}
	s.mu.Lock()
	sess.ready = true
	s.notifyLocked()
	s.mu.Unlock()
	s.log.Debug("gateway ready", "shard", shard[0], "shard_count", shard[1], "guilds", len(ids))
	return true
}

// checkShard returns the shard an IDENTIFY asks for ([0, 1] when it names
// none); it refuses the connection and reports false when the Server does not
// run that shard.
func (s *Server) checkShard(c *gwConn, asked *[2]int) ([2]int, bool) {
	shard := [2]int{0, 1}
	if asked != nil {
		shard = *asked
	}
	switch {
	case shard[1] < 1 || shard[0] < 0 || shard[0] >= shard[1]:
		c.reject(closeInvalidShard, "Invalid shard.")
		return shard, false
	case shard[1] < s.cfg.shardCount:
		c.reject(closeShardingRequired, "Sharding required.")
		return shard, false
	case shard[1] != s.cfg.shardCount:
		c.reject(closeInvalidShard, "Invalid shard.")
		return shard, false
	}
	return shard, true
}

// resume continues a session on this connection: replays the dispatches
// the client missed, then RESUMED. An unknown session, or one whose missed
// events are gone, gets INVALID_SESSION (d=false), and discordgo identifies
// again on the same connection. It reports whether the connection goes on.
func (s *Server) resume(ctx context.Context, c *gwConn, raw json.RawMessage) bool {
	var d resumeData
	if err := json.Unmarshal(raw, &d); err != nil {
		c.reject(closeDecodeError, "Decode error.")
		return false
	}
	if !s.tokenOK(d.Token) {
		c.reject(closeAuthenticationFailed, "Authentication failed.")
		return false
	}
	s.mu.Lock()
	sess := s.sessions[d.SessionID]
	if s.closed || sess == nil {
		s.mu.Unlock()
		return s.invalidSession(ctx, c)
	}
	sess.mu.Lock()
	replay, ok := sess.framesAfterLocked(d.Seq)
	if !ok {
		sess.mu.Unlock()
		s.mu.Unlock()
		return s.invalidSession(ctx, c)
	}
	old := sess.conn
	sess.conn = c
	c.session = sess
	s.live[sess.shard[0]] = sess
	s.mu.Unlock()

	var err error
	for _, f := range replay {
		if err = c.write(ctx, f.data); err != nil {
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
	if err != nil {
		return false
	}
	s.mu.Lock()
	sess.ready = true
	s.notifyLocked()
	s.mu.Unlock()
	s.log.Debug("gateway resumed", "shard", sess.shard[0], "replayed", len(replay))
	return true
}

func (s *Server) invalidSession(ctx context.Context, c *gwConn) bool {
	s.log.Debug("gateway resume refused: invalid session")
	return c.writeJSON(ctx, outFrame{Op: opInvalidSession, D: false}) == nil
}

// connectedLocked returns the session that receives the events of shard,
// or ErrShardNotConnected. A session identified a moment ago qualifies even
// if READY is still being written: its mutex puts later events after it, so
// a test may send events as soon as discordgo's Open returns. The caller
// holds s.mu.
func (s *Server) connectedLocked(shard int) (*gwSession, error) {
	if s.closed {
		return nil, ErrClosed
	}
	sess := s.live[shard]
	if sess == nil || sess.conn == nil {
		return nil, fmt.Errorf("shard %d: %w", shard, ErrShardNotConnected)
	}
	return sess, nil
}

// CloseClientConnections closes every open connection to the Server, REST
// and gateway, without a close frame, as a network failure would, like
// httptest.Server.CloseClientConnections. A discordgo session with
// ShouldReconnectOnError notices, reconnects (after its one-second Close)
// and resumes; events sent meanwhile are replayed.
func (s *Server) CloseClientConnections() {
	s.mu.Lock()
	conns := make([]*gwConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.Close()
	}
	s.log.Debug("client connections dropped", "gateway", len(conns))
	s.http.CloseClientConnections()
}

// randomHex returns n random bytes in hex, for session IDs and tokens.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
