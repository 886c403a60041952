package redistest

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// RoundTrips is a go-redis hook that counts what a client sends to Redis: one
// per command, one per pipeline (one write and one read of the connection).
// A new connection's handshake (HELLO, CLIENT SETINFO) is not counted.
type RoundTrips struct{ N atomic.Int64 }

// DialHook implements redis.Hook.
func (r *RoundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (r *RoundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n != "hello" && n != "client" {
			r.N.Add(1)
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (r *RoundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if n := cmds[0].Name(); n != "hello" && n != "client" {
			r.N.Add(1)
		}
		return next(ctx, cmds)
	}
}
