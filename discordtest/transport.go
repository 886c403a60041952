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

// Client returns a new *http.Client that sends every request for Discord's
// hosts (discord.com, discordapp.com, discord.gg, discordapp.net and their
// subdomains) to this Server, path kept, and refuses any other host.
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

// NewSession returns an unopened discordgo session of shard shardID of
// shardCount that reaches only this Server (GUILDS intent, no reconnect).
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
