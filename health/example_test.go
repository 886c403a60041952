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
