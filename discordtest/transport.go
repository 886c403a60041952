package discordtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// dialOnlyHere dials the Server and refuses any other address, so a client
// of this package cannot reach the internet, even through a redirect.
func (s *Server) dialOnlyHere(ctx context.Context, network, addr string) (net.Conn, error) {
	if addr != s.addr {
		return nil, fmt.Errorf("discordtest: refusing to dial %s: only %s is allowed", addr, s.addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// isDiscordHost reports whether host is one of Discord's.
func isDiscordHost(host string) bool {
	host = strings.ToLower(host)
	for _, domain := range []string{"discord.com", "discordapp.com", "discord.gg", "discordapp.net"} {
		if host == domain || strings.HasSuffix(host, "."+domain) {
			return true
		}
	}
	return false
}

// rewriteTransport sends requests for Discord's hosts to the Server.
type rewriteTransport struct {
	addr string
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper. It never modifies req.
func (t *rewriteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isDiscordHost(req.URL.Hostname()) && req.URL.Host != t.addr {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("discordtest: refusing request to %s: not a Discord host", req.URL.Host)
	}
	out := req.Clone(req.Context())
	out.URL.Scheme = "http"
	out.URL.Host = t.addr
	out.Host = ""
	return t.base.RoundTrip(out)
}

// Client returns a new *http.Client, for discordgo.Session.Client, that
// sends every request for discord.com, discordapp.com, discord.gg,
// discordapp.net or their subdomains to this Server (path kept) and refuses
// any other host, so discordgo's default endpoints reach the fake.
func (s *Server) Client() *http.Client {
	return &http.Client{Transport: &rewriteTransport{addr: s.addr, base: s.transport}, Timeout: 20 * time.Second}
}

// dialer returns a websocket dialer that reaches only this Server.
func (s *Server) dialer() *websocket.Dialer {
	return &websocket.Dialer{
		NetDialContext:   s.dialOnlyHere,
		HandshakeTimeout: 10 * time.Second,
	}
}

// NewSession returns a discordgo session for shard shardID of shardCount,
// set up for this Server and not opened (the caller opens it, and closes it
// before the Server): the bot token, Client, a Dialer that reaches only this
// Server, the shard, intents Guilds, and ShouldReconnectOnError false.
//
// Reconnecting is off because of a race in discordgo v0.29: a heartbeat that
// fails just as Close sends its close frame reconnects the session after
// Close, leaving goroutines behind. A test that wants reconnects (see
// CloseClientConnections) turns it on and, before closing, waits until the
// session's LastHeartbeatAck is later than the reconnect.
func (s *Server) NewSession(shardID, shardCount int) (*discordgo.Session, error) {
	if shardCount < 1 || shardID < 0 || shardID >= shardCount {
		return nil, fmt.Errorf("discordtest: shard [%d, %d]: need 0 <= id < count", shardID, shardCount)
	}
	sess, err := discordgo.New("Bot " + s.cfg.token)
	if err != nil {
		return nil, fmt.Errorf("discordtest: new session: %w", err)
	}
	sess.Client = s.Client()
	sess.Dialer = s.dialer()
	sess.ShardID = shardID
	sess.ShardCount = shardCount
	sess.Identify.Shard = &[2]int{shardID, shardCount}
	sess.Identify.Intents = discordgo.IntentsGuilds
	sess.ShouldReconnectOnError = false
	return sess, nil
}
