// Package httpx holds the module's small HTTP helpers, one of each: a
// ResponseWriter that remembers its status. (The loopback test is
// internal/baseurl.Loopback.)
package httpx

import "net/http"

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
