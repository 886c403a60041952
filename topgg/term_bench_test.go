package topgg_test

import (
	"context"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/dblkit/go-topgg/internal/term"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// BenchmarkTermWindow measures the window a fleet leader's term check leaves
// (see fleet's package doc): the term is checked right before the client
// hands the request to its *http.Client, so what follows the check is the
// transport's work up to the last byte written, reported as
// window-ns/op (from httptrace's GetConn to WroteRequest, on loopback, with a
// kept-alive connection; the check itself is BenchmarkCheck in internal/term).
func BenchmarkTermWindow(b *testing.B) {
	srv, err := topggtest.NewServer()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		b.Fatal(err)
	}
	var window time.Duration
	var getConn time.Time
	trace := &httptrace.ClientTrace{
		GetConn:      func(string) { getConn = time.Now() },
		WroteRequest: func(httptrace.WroteRequestInfo) { window += time.Since(getConn) },
	}
	tm := term.New(nil, time.Now().Add(time.Hour), nil)
	ctx := httptrace.WithClientTrace(term.With(context.Background(), tm), trace)
	if _, err := c.Project(ctx); err != nil { // opens the connection
		b.Fatal(err)
	}
	window = 0
	for b.Loop() {
		if _, err := c.Project(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(window.Nanoseconds())/float64(b.N), "window-ns/op")
}
