package topggprom_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topggprom"
)

// Count the client's calls and serve them on /metrics.
func Example() {
	fake, err := topggtest.NewServer() // the real service in production
	if err != nil {
		panic(err)
	}
	defer fake.Close()

	reg := prometheus.NewRegistry()
	c, err := topggprom.New(reg)
	if err != nil {
		panic(err)
	}
	client, err := topgg.New(fake.Token(), topgg.WithBaseURL(fake.URL), topgg.WithObserver(c.ObserveRequest))
	if err != nil {
		panic(err)
	}
	if _, err := client.Project(context.Background()); err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, "topgg_api_requests_total{") {
			fmt.Print(line)
		}
	}
	// Output:
	// topgg_api_requests_total{code="200",method="GET",outcome="ok",route="/v1/projects/@me"} 1
}
