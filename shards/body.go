package shards

import (
	"fmt"
	"io"
	"net/http"
)

// BodyTooLargeError is the error of a REST call whose response body is
// longer than the Group's bound (8 MiB), which is not read further.
type BodyTooLargeError struct {
	Limit         int64  // the bound, in bytes
	Method, Route string // as in [RateLimitError]
}

// Error names the request and the bound.
func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("shards: %s %s: response body longer than %d bytes", e.Method, e.Route, e.Limit)
}

// bodyLimit fails every response body longer than limit.
type bodyLimit struct {
	limit int64
	next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper. A declared Content-Length over the
// limit fails at once, without reading.
func (t *bodyLimit) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	tooLarge := &BodyTooLargeError{Limit: t.limit, Method: req.Method, Route: routeKey(req.URL.Path)}
	if resp.ContentLength > t.limit {
		_ = resp.Body.Close()
		return nil, tooLarge
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.limit, err: tooLarge}
	return resp, nil
}

// limitedBody reads at most left bytes, then fails with err if more follow.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	err  *BodyTooLargeError
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	// One byte more than allowed tells a body of exactly the limit from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.err
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
