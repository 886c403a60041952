package health_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/dblkit/go-topgg/health"
)

// Serve /readyz from named checks: 503 until every check passes.
func Example() {
	var shardsReady atomic.Bool
	ready, err := health.NewProbe("readyz",
		health.Check{Name: "shards", Func: func(context.Context) error {
			if !shardsReady.Load() {
				return errors.New("waiting for READY")
			}
			return nil
		}},
	)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /readyz", ready)
	probe := func() {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz?verbose", nil))
		body, _ := io.ReadAll(rec.Body)
		fmt.Printf("%d\n%s", rec.Code, body)
	}
	probe()
	shardsReady.Store(true)
	probe()
	// Output:
	// 503
	// [-]shards failed: waiting for READY
	// readyz check failed
	// 200
	// [+]shards ok
	// ok
}

// An operations server: /metrics (any http.Handler; promhttp's in a bot),
// /livez and /readyz, on its own address until the context is done.
func ExampleListen() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	srv, err := health.Listen(ctx, health.ServerConfig{
		Addr:      "127.0.0.1:0", // METRICS_ADDR in the example bot
		Metrics:   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "up 1") }),
		Readiness: []health.Check{{Name: "shards", Func: func(context.Context) error { return nil }}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	resp, err := http.Get("http://" + srv.Addr().String() + "/readyz")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	fmt.Printf("%d %s", resp.StatusCode, body) // body ends with a newline
	stop()                                     // in a bot: once the shards are closed, so that /readyz answers until then
	fmt.Println("stopped:", <-done)
	// Output:
	// 200 ok
	// stopped: <nil>
}
