package webhook

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Buffer sizes: a pooled buffer starts at 4 KiB (a vote.create is under
// 1 KiB) and is kept only up to 64 KiB, so a rare large body does not pin
// memory.
const (
	initialBuf = 4 << 10
	keptBuf    = 64 << 10
)

// bufPool reads bodies into reused buffers. Decode copies what it keeps, so
// a buffer goes back to the pool once the body is decoded.
type bufPool struct{ p sync.Pool }

func newBufPool() *bufPool {
	return &bufPool{p: sync.Pool{New: func() any { b := make([]byte, 0, initialBuf); return &b }}}
}

// read reads r's body, at most MaxBodyBytes of it: a declared Content-Length
// over the cap is refused before any byte is read, and an undeclared body is
// refused as soon as one byte beyond the cap arrives. The buffer (non-nil
// even on error) must be given back with put.
func (p *bufPool) read(r *http.Request) (*[]byte, error) {
	bp := p.p.Get().(*[]byte)
	buf := (*bp)[:0]
	defer func() { *bp = buf }()
	if r.ContentLength > MaxBodyBytes {
		return bp, fmt.Errorf("%w: Content-Length %d over %d", ErrBodyTooLarge, r.ContentLength, MaxBodyBytes)
	}
	if r.Body == nil {
		return bp, nil
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		// Never ask for more than one byte past the cap.
		want := min(cap(buf), MaxBodyBytes+1)
		n, err := r.Body.Read(buf[len(buf):want])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxBodyBytes {
			return bp, fmt.Errorf("%w: over %d bytes", ErrBodyTooLarge, MaxBodyBytes)
		}
		if errors.Is(err, io.EOF) {
			return bp, nil
		}
		if err != nil {
			return bp, fmt.Errorf("webhook: reading the body: %w", err)
		}
	}
}

func (p *bufPool) put(bp *[]byte) {
	if cap(*bp) <= keptBuf {
		*bp = (*bp)[:0]
		p.p.Put(bp)
	}
}
