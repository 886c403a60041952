package webhook_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/dblkit/go-topgg/topgg/webhook"
)

// The budget for verifying, decoding and answering a typical vote.create is
// Top.gg's: an answer within 5 s, of which the receiver's own work should take
// at most 5 ms, leaving the rest to OnVote's store. encoding/json takes about
// 7 us of it (BENCHMARKS.md; go test -run '^$' -bench . -benchmem
// ./topgg/webhook/).

// discardWriter is the cheapest ResponseWriter: what the benchmark measures
// is the Receiver.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Flush()                      {}

// rewindBody serves the same bytes on every request.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

// BenchmarkReceiverVoteCreate: one signed vote.create through ServeHTTP:
// header parse, timestamp check, bounded read, HMAC, decode, OnVote, answer.
func BenchmarkReceiverVoteCreate(b *testing.B) {
	cfg, _ := config(&recorder{})
	cfg.OnVote = func(context.Context, webhook.Vote) error { return nil }
	cfg.OnEvent = nil
	h, err := webhook.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(voteBody)
	req, err := webhook.NewRequest(context.Background(), "http://127.0.0.1/", secretA, now, body)
	if err != nil {
		b.Fatal(err)
	}
	rb := &rewindBody{}
	req.Body = rb
	w := &discardWriter{h: http.Header{}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		rb.Reset(body)
		w.code = 0
		h.ServeHTTP(w, req)
		if w.code != http.StatusNoContent {
			b.Fatalf("status %d", w.code)
		}
	}
}

// BenchmarkVerify: the exported Verify alone (it keys a fresh HMAC per call,
// where a Receiver reuses keyed states).
func BenchmarkVerify(b *testing.B) {
	body := []byte(voteBody)
	sig := webhook.Sign(secretA, now, body)
	b.ReportAllocs()
	for b.Loop() {
		if err := webhook.Verify(sig, body, now, secretA); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeVoteCreate: the decoder alone.
func BenchmarkDecodeVoteCreate(b *testing.B) {
	body := []byte(voteBody)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := webhook.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}
