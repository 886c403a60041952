package fleet

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// BenchmarkRenew measures one lease renewal: the floor (the renew script
// alone, as before the replicas' acknowledgement), on a single node (the
// script and ROLE), and on a master with one replica (the script, ROLE and
// WAIT for the replica).
func BenchmarkRenew(b *testing.B) {
	master := redistest.Start(b, redistest.WithArgs("--repl-diskless-sync-delay", "0"))
	ctx := context.Background()
	b.Run("floor", func(b *testing.B) { benchRenew(b, master, "floor", true) })
	b.Run("single", func(b *testing.B) { benchRenew(b, master, "single", false) })
	redistest.Start(b, redistest.WithArgs("--replicaof", "127.0.0.1", portOf(b, master)))
	mc := master.Client(b)
	require.Eventually(b, func() bool { return mc.Wait(ctx, 1, time.Second).Val() == 1 }, haWait, haTick)
	b.Run("replica", func(b *testing.B) { benchRenew(b, master, "replica", false) })
}

func benchRenew(b *testing.B, srv *redistest.Server, bot string, floor bool) {
	rdb := newClient(b, srv.Addr())
	l, err := NewLease(rdb, bot, LeaseConfig{TTL: time.Minute})
	require.NoError(b, err)
	ctx := context.Background()
	tok, _, err := l.tryAcquire(ctx)
	require.NoError(b, err)
	require.Positive(b, tok)
	value := l.holder + ":" + strconv.FormatInt(tok, 10)
	b.ReportAllocs()
	for b.Loop() {
		var ok bool
		if floor {
			var n int
			n, err = renewScript.Run(ctx, rdb, []string{l.leaseKey}, value, l.ttl.Milliseconds()).Int()
			ok = n == 1
		} else {
			ok, err = l.renew(ctx, value, time.Minute)
		}
		if err != nil || !ok {
			b.Fatalf("renew: %v %v", ok, err)
		}
	}
}
