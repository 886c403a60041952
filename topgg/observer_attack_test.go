package topgg_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestObserverPanicIsContainedAcrossRetries: a panicking Observer neither
// fails the call it watches (nor its retry) nor keeps the next observer from hearing of it; the
// log names the observer, without a stack.
func TestObserverPanicIsContainedAcrossRetries(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	logger, logs := warnLogs()
	var rec recorder
	c := newClient(t, srv, topgg.WithLogger(logger),
		topgg.WithObserver(func(topgg.Request) { panic("metrics bug") }),
		topgg.WithObserver(rec.observe))
	srv.Inject(topggtest.Fault{Method: http.MethodPatch, Path: metricsPath, Status: http.StatusServiceUnavailable})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(4)}))
	got := rec.requests()
	require.Len(t, got, 2, "both attempts reached the second observer")
	assert.Equal(t, topgg.OutcomeOK, got[1].Outcome)
	assert.Equal(t, 2, strings.Count(logs.String(), "Observer panicked"))
	assert.Contains(t, logs.String(), "metrics bug")
	assert.NotContains(t, logs.String(), "goroutine ")
}
