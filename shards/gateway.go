package shards

import (
	"context"
	"net"
	"sync"
	"time"
)

// handshakeTimeout is gorilla's default websocket handshake bound.
const handshakeTimeout = 45 * time.Second

// gatewayDialer dials one shard's gateway connections until stopped, and can
// abort the connection a pending Open waits on. Safe for concurrent use.
type gatewayDialer struct {
	dialer net.Dialer

	stopped context.Context // done once stop was called: no dial from then on
	stopFn  context.CancelFunc
	mu      sync.Mutex
	last    net.Conn // the connection dialled last
}

func newGatewayDialer() *gatewayDialer {
	ctx, cancel := context.WithCancel(context.Background())
	return &gatewayDialer{stopped: ctx, stopFn: cancel}
}

func (d *gatewayDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(d.stopped, cancel)()
	c, err := d.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// stop takes mu: either it sees this connection, or this sees it stopped.
	if d.stopped.Err() != nil {
		_ = c.Close()
		return nil, ErrClosed
	}
	d.last = c
	return c, nil
}

// stop refuses every dial from now on and ends those in flight; with abort
// (only while an Open is pending), it also closes the connection dialled last.
// It is idempotent.
func (d *gatewayDialer) stop(abort bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopFn()
	if abort && d.last != nil {
		_ = d.last.Close()
	}
}
