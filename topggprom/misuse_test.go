package topggprom_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topggprom"
)

// A typed nil registry is refused with an error, not a panic in Register.
func TestNewRefusesATypedNilRegistry(t *testing.T) {
	t.Parallel()
	var reg *prometheus.Registry
	var m *topggprom.Metrics
	var err error
	require.NotPanics(t, func() { m, err = topggprom.New(reg) })
	assert.Error(t, err)
	assert.Nil(t, m)
}

// The hooks of a nil Metrics (New failed, its error ignored) or a zero one do
// nothing: they run inside the client and the jobs, where a panic would
// break a request or a delivery.
func TestHooksOfANilOrZeroMetricsDoNothing(t *testing.T) {
	t.Parallel()
	for name, m := range map[string]*topggprom.Metrics{"nil": nil, "zero": {}} {
		assert.NotPanics(t, func() {
			m.ObserveRequest(topgg.Request{Route: topgg.RouteLegacyBots, Status: 200})
			m.AutopostAttempt("posted", 1, 1, 1)
			m.CommandSync("published")
			m.VotesIngested("webhook", 1, 1)
			m.VoteRewarded("webhook", time.Second)
			m.VoteRetried("webhook")
			m.VoteGivenUp("webhook")
			m.VotesPending(1)
			m.VoteExpired()
			m.WebhookRequest("accepted")
			m.FleetLeader(true)
		}, name)
	}
}
