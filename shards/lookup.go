package shards

import (
	"context"
	"io"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// gatewayLookup ties the gateway lookup that discordgo's Open makes (GET
// gateway, without a context) to the Group's life: it ends when the Group's
// Open is cancelled or the Group is closed. Other requests pass untouched. It
// is safe for concurrent use.
type gatewayLookup struct {
	shut context.Context // done when the Group stops
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper without changing req.
func (t *gatewayLookup) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.String() != discordgo.EndpointGateway {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.shut, cancel)
	release := func() { stop(); cancel() }
	resp, err := t.next.RoundTrip(req.Clone(ctx))
	if err != nil {
		release()
		return nil, err
	}
	// The body is read after RoundTrip returns: ctx lives until it is closed.
	resp.Body = &releaseOnClose{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// releaseOnClose runs release when the body is closed.
type releaseOnClose struct {
	io.ReadCloser
	release func()
}

func (b *releaseOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}
