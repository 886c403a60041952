package health

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// Bounds of the operations server; shutdownGrace is what requests in flight
// get once Run's context is done, before their connections are closed.
const (
	serverTimeout = 2 * Timeout
	shutdownGrace = time.Second
)

// ServerConfig is what an operations server serves.
type ServerConfig struct {
	// Addr is host:port or :port; port 0 picks a free one (see Server.Addr).
	Addr string
	// Metrics answers GET /metrics; nil: no /metrics.
	Metrics http.Handler
	// Liveness and Readiness are the checks of /livez and /readyz
	// (plugin.Plugin's LivenessChecks and ReadinessChecks, say).
	Liveness, Readiness []Check
	// Logger gets the HTTP server's errors at debug level; nil: none.
	Logger *slog.Logger
}

// Server is a listening operations server: /metrics, /livez and /readyz.
// Make it with [Listen]; [Server.Run] it once. One that will not serve is
// freed by Run with a done context, which returns once the port is free.
type Server struct {
	srv  *http.Server
	l    net.Listener
	used atomic.Bool
}

// Listen makes the probes and listens on cfg.Addr now; ctx bounds the listen
// only. Errors name the address, never a check's secret.
func Listen(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if ctx == nil || cfg.Addr == "" {
		return nil, fmt.Errorf("%w: Listen needs a context and an address", ErrInvalidCheck)
	}
	mux := http.NewServeMux()
	for path, checks := range map[string][]Check{"livez": cfg.Liveness, "readyz": cfg.Readiness} {
		p, err := NewProbe(path, checks...)
		if err != nil {
			return nil, err
		}
		mux.Handle("/"+path, p)
	}
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", cfg.Metrics)
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("health: operations server: %w", err)
	}
	logger := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: serverTimeout / 2, ReadTimeout: serverTimeout,
		WriteTimeout: serverTimeout, IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}
	return &Server{srv: srv, l: l}, nil
}

// Addr is the address the server listens on (the port picked for port 0).
func (s *Server) Addr() net.Addr { return s.l.Addr() }

// Run serves until ctx is done, then shuts the server down (requests in
// flight get a second) and returns once it is gone. A second Run is an error.
func (s *Server) Run(ctx context.Context) error {
	if s == nil || s.srv == nil || ctx == nil {
		return fmt.Errorf("%w: Run needs a Server from Listen and a context", ErrInvalidCheck)
	}
	if s.used.Swap(true) {
		return errors.New("health: operations server already run")
	}
	if err := httpx.Serve(ctx, s.srv, s.l, shutdownGrace); err != nil {
		return fmt.Errorf("health: operations server: %w", err)
	}
	return nil
}
