package topggprom_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topggprom"
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
