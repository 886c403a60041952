package topggtest

import (
	"bytes"
	"cmp"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	pathpkg "path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/topgg"
)

const (
	apiPrefix    = "/api"  // the API root's path, as on https://top.gg/api
	maxBodyBytes = 8 << 20 // 16 locales of 50,000 four-byte runes fit
)

// Server is a running fake of the Top.gg service, safe for concurrent use.
type Server struct {
	// URL is the API root, "http://127.0.0.1:<port>/api".
	URL string

	cfg      config
	token    string
	ts       *httptest.Server
	accepts  atomic.Int64
	faults   httpx.FaultQueue // has its own lock
	requests httpx.Requests   // has its own lock
	control  http.Handler     // nil without WithControlAPI
	mux      *http.ServeMux   // the endpoints

	mu            sync.Mutex
	votes         []storedVote
	voteSeq       int64
	cursorEpoch   int64
	metrics       []MetricsRecord
	commands      []byte
	announcements []topgg.Announcement
	headline      map[string]string
	pageContent   map[string]string
	bots          []Bot
	legacyStats   *topgg.BotStats
	legacyHits    []time.Time

	hooks *webhookState // has its own lock
}

// NewServer starts a fake service on 127.0.0.1; the caller must Close it. It
// fails only on an invalid option or if it cannot listen.
func NewServer(opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("topggtest: listen: %w", err)
	}
	s := &Server{
		cfg:         cfg,
		token:       cmp.Or(cfg.token, ProjectToken(cfg.project.ID)),
		hooks:       newWebhookState(cfg.targets),
		headline:    map[string]string{},
		pageContent: map[string]string{},
	}
	if cfg.project.IsDiscordBot() {
		s.bots = append(s.bots, ownBot(cfg.project, cfg.now()))
	}
	s.mux = s.routes()
	if cfg.control {
		s.control = s.controlMux()
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

// Token returns the token the server accepts: "Bearer "+Token() on v1, bare on v0.
func (s *Server) Token() string { return s.token }

// Project returns the project that owns the token.
func (s *Server) Project() Project { return s.cfg.project.clone() }

// Client returns an *http.Client configured to talk to the server.
func (s *Server) Client() *http.Client { return s.ts.Client() }

// NewClient returns topgg.New(Token, base URL, Client, then opts).
func (s *Server) NewClient(opts ...topgg.Option) (*topgg.Client, error) {
	base := []topgg.Option{topgg.WithBaseURL(s.URL), topgg.WithHTTPClient(s.Client())}
	return topgg.New(s.token, append(base, opts...)...)
}

// Close stops the server, like httptest.Server.Close: requests held by a
// Delay are dropped, webhook deliveries stop, and it waits for the rest (30 s
// at most: then it panics, naming the wait). It may be called more than once.
func (s *Server) Close() {
	httpx.Within("topggtest: Close: the webhook deliveries and handlers to end", func() {
		s.hooks.close()
		s.ts.Close()
	})
}

// CloseClientConnections closes every open connection to the server.
func (s *Server) CloseClientConnections() { s.ts.CloseClientConnections() }

// Accepts returns how many TCP connections the server has accepted.
func (s *Server) Accepts() int { return int(s.accepts.Load()) }

// Request is one request the server received, as sent; Path is under the API
// root, without "/api" (a path outside it is kept whole), Body is cut at 8 MiB
// and At is on the server clock (see WithNow). The same type as
// discordtest.Request.
type Request = httpx.Request

// Requests returns a copy of every request received, in arrival order.
func (s *Server) Requests() []Request { return s.requests.All() }

func (s *Server) now() time.Time { return s.cfg.now() }

// serve records the request, applies faults, then routes it.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.control != nil && (r.URL.Path == controlPrefix || strings.HasPrefix(r.URL.Path, controlPrefix+"/")) {
		s.control.ServeHTTP(w, r)
		return
	}
	start, faulted := time.Now(), false
	sw := &httpx.StatusRecorder{ResponseWriter: w}
	path, mounted := strings.CutPrefix(r.URL.Path, apiPrefix)
	mounted = mounted && (path == "" || strings.HasPrefix(path, "/"))
	if !mounted {
		path = r.URL.Path
	}
	body, err := io.ReadAll(http.MaxBytesReader(sw, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	isTooLarge := errors.As(err, &tooLarge)
	if err != nil && !isTooLarge {
		return // the client went away mid-body
	}
	answered := s.requests.Add(Request{Method: r.Method, Path: path, Query: r.URL.Query(), Header: r.Header.Clone(),
		Body: slices.Clone(body), At: s.now()})
	// Top.gg's edge merges repeated slashes; the record keeps the path as sent.
	for strings.Contains(path, "//") {
		path = strings.ReplaceAll(path, "//", "/")
	}
	defer func() {
		answered(sw.Status)
		// Method and path only: the Authorization header never reaches a log.
		s.cfg.logger.Debug("topggtest request", "method", r.Method, "path", path,
			"status", sw.Status, "fault", faulted, "duration", time.Since(start))
	}()

	f, faulted := s.faults.Take(r.Method, path)
	switch {
	case faulted && s.playFault(sw, r, path, f):
	case !mounted:
		writeLegacyError(sw, http.StatusNotFound, "Not found")
	case isTooLarge:
		writeError(sw, path, http.StatusRequestEntityTooLarge, "request body is too large")
	default:
		r.URL.Path, r.URL.RawPath, r.Body = path, "", io.NopCloser(bytes.NewReader(body))
		if pathpkg.Clean(path) != path { // ServeMux would redirect: Top.gg has no such endpoint
			notFound(sw, r)
			return
		}
		s.mux.ServeHTTP(sw, r)
	}
}

// authorize returns why the request's token is refused, or "": v1 takes
// "Bearer <token>"; v0 the bare token, or "Bearer <token>" as the Python SDK
// sent it. The reason never quotes the header.
func (s *Server) authorize(r *http.Request, v1 bool) string {
	h := r.Header.Get("Authorization")
	scheme, cred, found := strings.Cut(h, " ")
	bearer := found && strings.EqualFold(scheme, "Bearer")
	token := h
	if bearer && (v1 || cred != "") {
		token = cred
	}
	switch {
	case h == "":
		return "missing Authorization header"
	case v1 && !bearer:
		return `the Authorization header must be "Bearer <token>" on v1`
	case subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) != 1:
		return "invalid token"
	}
	return ""
}
