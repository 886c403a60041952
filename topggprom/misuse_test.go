package topggprom_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/topggprom"
	"github.com/dblkit/go-topgg/voterewards"
)

// A typed nil registry is refused with an error, not a panic in Register.
func TestNewRefusesATypedNilRegistry(t *testing.T) {
	t.Parallel()
	var reg *prometheus.Registry
	var c *topggprom.Collector
	var err error
	require.NotPanics(t, func() { c, err = topggprom.New(reg) })
	assert.Error(t, err)
	assert.Nil(t, c)
}

// The methods of a nil Collector (New failed, its error ignored) or a zero
// one do nothing: they run inside the client and the jobs, where a panic
// would break a request or a delivery.
func TestMethodsOfANilOrZeroCollectorDoNothing(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]*topggprom.Collector{"nil": nil, "zero": {}} {
		assert.NotPanics(t, func() {
			c.ObserveRequest(topgg.Request{Route: topgg.RouteLegacyBots, Status: 200})
			c.ObservePost(autopost.Result{Servers: 1})
			c.ObserveSync(commands.Result{}, nil)
			c.ObserveVote(voterewards.Event{Type: voterewards.EventDelivered, Origin: voterewards.OriginWebhook, Latency: time.Second})
			c.ObserveWebhook(webhook.OutcomeAccepted)
			c.ObserveLease(fleet.LeaseState{Leader: true})
			ch := make(chan prometheus.Metric, 1)
			c.Collect(ch)
			close(ch)
			dch := make(chan *prometheus.Desc, 1)
			c.Describe(dch)
			close(dch)
		}, name)
	}
}
