package topggtest

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dblkit/go-topgg/internal/fault"
	"github.com/dblkit/go-topgg/topgg"
)

// apiPrefix is where the API root is mounted, like https://top.gg/api, so
// that a client ignoring its base URL's path is caught by a 404.
const apiPrefix = "/api"

// maxBodyBytes bounds every request body; 16 locales of 50,000 four-byte
// runes fit, anything larger is refused with 413.
const maxBodyBytes = 8 << 20

// Server is a running fake of the Top.gg service. Create it with
// [NewServer] and stop it with [Server.Close]. All methods are safe for
// concurrent use, also while requests are in flight.
type Server struct {
	// URL is the API root, "http://127.0.0.1:<port>/api", with no trailing
	// slash. v1 lives under URL+"/v1", v0 under URL+"/bots".
	URL string

	cfg       config
	token     string
	ts        *httptest.Server
	closing   chan struct{}
	closeOnce sync.Once
	accepts   atomic.Int64
	faults    fault.Queue // has its own lock

	mu               sync.Mutex
	requests         []Request
	votes            []storedVote
	voteSeq          int64
	cursorEpoch      int64
	metrics          []MetricsRecord
	commands         []byte
	hasCommands      bool
	announcements    []Announcement
	lastAnnouncement time.Time
	headline         map[string]string
	pageContent      map[string]string
	bots             []Bot
	legacyStats      *LegacyStats
	legacyHits       []time.Time

	hooks webhookState // has its own lock
}

// NewServer starts a fake service on 127.0.0.1 with a random port. The
// caller must Close it (t.Cleanup(srv.Close)). It fails only on an invalid
// option or if it cannot listen, as discordtest.NewServer does.
func NewServer(opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("topggtest: listen: %w", err)
	}
	token := cfg.token
	if token == "" {
		token = ProjectToken(cfg.project.ID)
	}
	s := &Server{
		cfg:         cfg,
		token:       token,
		closing:     make(chan struct{}),
		headline:    map[string]string{},
		pageContent: map[string]string{},
	}
	if cfg.project.isDiscordBot() {
		s.bots = append(s.bots, ownBot(cfg.project, cfg.now()))
	}

	ts := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(s.serve)}}
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.accepts.Add(1)
		}
	}
	ts.Config.ErrorLog = slog.NewLogLogger(cfg.logger.Handler(), slog.LevelDebug)
	ts.Start()
	s.ts = ts
	s.URL = ts.URL + apiPrefix
	return s, nil
}

// Token returns the token the server accepts: "Bearer "+Token() on v1, the
// bare Token() on v0.
func (s *Server) Token() string { return s.token }

// Project returns the project that owns the token.
func (s *Server) Project() Project { return s.cfg.project.clone() }

// Client returns an *http.Client configured to talk to the server. Its idle
// connections are closed by Close.
func (s *Server) Client() *http.Client { return s.ts.Client() }

// NewClient returns a Top.gg client for this server, made as a bot makes
// its own with topgg.New: the server's Token, with its URL as base URL and
// Client as HTTP client, then opts (which may replace either).
func (s *Server) NewClient(opts ...topgg.Option) (*topgg.Client, error) {
	base := []topgg.Option{topgg.WithBaseURL(s.URL), topgg.WithHTTPClient(s.Client())}
	return topgg.New(s.token, append(base, opts...)...)
}

// Close stops the server: requests held by an injected Delay are dropped at
// once, webhook deliveries stop (a waiting retry at once, an attempt in
// flight is cancelled) and are waited for, then Close waits for the
// remaining requests to finish, like httptest.Server.Close. It may be called
// more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	s.hooks.close()
	s.ts.Close()
}

// CloseClientConnections closes every open connection to the server, so
// clients see dropped connections, like
// httptest.Server.CloseClientConnections.
func (s *Server) CloseClientConnections() { s.ts.CloseClientConnections() }

// Accepts returns how many TCP connections the server has accepted so far;
// a client that reuses keep-alive connections makes it grow slower than the
// request count.
func (s *Server) Accepts() int { return int(s.accepts.Load()) }

func (s *Server) now() time.Time { return s.cfg.now() }

// serve records the request, applies faults, then routes it.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	path, mounted := strings.CutPrefix(r.URL.Path, apiPrefix)
	mounted = mounted && (path == "" || strings.HasPrefix(path, "/"))
	if !mounted {
		path = r.URL.Path
	}

	body, err := io.ReadAll(http.MaxBytesReader(sw, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	isTooLarge := errors.As(err, &tooLarge)
	if err != nil && !isTooLarge {
		// The client went away mid-body; there is nobody to answer.
		return
	}
	s.record(r, path, body)

	faulted := false
	if f, ok := s.faults.Take(r.Method, path); ok {
		faulted = true
		if s.playFault(sw, r, path, f) {
			s.logRequest(r, path, sw.status, faulted, start)
			return
		}
	}

	switch {
	case !mounted:
		writeLegacyError(sw, http.StatusNotFound, "Not found")
	case isTooLarge:
		writeError(sw, path, http.StatusRequestEntityTooLarge, "request body is too large")
	default:
		s.route(sw, r, path, body)
	}
	s.logRequest(r, path, sw.status, faulted, start)
}

func (s *Server) logRequest(r *http.Request, path string, status int, faulted bool, start time.Time) {
	// Only method and path: the Authorization header never reaches a log.
	s.cfg.logger.Debug("topggtest request",
		slog.String("method", r.Method),
		slog.String("path", path),
		slog.Int("status", status),
		slog.Bool("fault", faulted),
		slog.Duration("duration", time.Since(start)))
}

// checkV1Auth reports whether the request carries "Bearer <token>".
func (s *Server) checkV1Auth(r *http.Request) (ok bool, detail string) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return false, "missing Authorization header"
	}
	scheme, cred, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return false, "the Authorization header must be \"Bearer <token>\" on v1"
	}
	if !s.tokenMatches(cred) {
		return false, "invalid token"
	}
	return true, ""
}

// checkLegacyAuth reports whether the request carries the bare token.
func (s *Server) checkLegacyAuth(r *http.Request) (ok bool, msg string) {
	h := r.Header.Get("Authorization")
	switch {
	case h == "":
		return false, "Unauthorized: missing Authorization header"
	case len(h) > 7 && strings.EqualFold(h[:7], "Bearer "):
		return false, "Unauthorized: v0 expects the bare token, not Bearer"
	case !s.tokenMatches(h):
		return false, "Unauthorized: invalid token"
	}
	return true, ""
}

func (s *Server) tokenMatches(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// statusWriter remembers the status for the log; Unwrap lets
// http.ResponseController reach the connection for Drop faults.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
