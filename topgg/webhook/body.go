package webhook

import (
	"fmt"
	"io"
	"net/http"
)

// readBody reads r's body, at most MaxBodyBytes of it: a declared
// Content-Length over the cap is refused before any byte is read, and an
// undeclared body is refused as soon as one byte beyond the cap arrives.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, fmt.Errorf("%w: Content-Length %d over %d", ErrBodyTooLarge, r.ContentLength, MaxBodyBytes)
	}
	if r.Body == nil {
		return nil, nil
	}
	// Never read more than one byte past the cap.
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if len(b) > MaxBodyBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrBodyTooLarge, MaxBodyBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("webhook: reading the body: %w", err)
	}
	return b, nil
}
