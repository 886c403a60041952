// Package httpx holds the module's HTTP and URL helpers: a ResponseWriter that
// remembers its status, bounded serving, base URL rules ([ParseBaseURL]), secrets
// kept out of what is shown ([Scrubber], [RedactURL]), the failures the fake
// services play ([Fault]) and the test servers' ports and logs ([FreePort]).
package httpx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// StatusRecorder is an http.ResponseWriter that remembers the first status
// written (200 when the handler wrote a body first, 0 when it wrote nothing).
type StatusRecorder struct {
	http.ResponseWriter
	Status int
}

// WriteHeader records the first status and passes it on.
func (r *StatusRecorder) WriteHeader(status int) {
	if r.Status == 0 {
		r.Status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

// Write records 200 when no status was written, as net/http does.
func (r *StatusRecorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath (flush, deadlines).
func (r *StatusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Serve serves srv on l until ctx is done, then shuts srv down: the requests
// in flight get grace to finish, then their connections are closed. It
// returns once srv.Serve has returned, and at once with Serve's error if
// Serve fails before ctx is done.
func Serve(ctx context.Context, srv *http.Server, l net.Listener, grace time.Duration) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	<-served
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
