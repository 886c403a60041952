package autopost_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/topgg"
)

// TestConfigErrorNamesTheField: New rejects an invalid Config with a
// *ConfigError that names the field.
func TestConfigErrorNamesTheField(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	for _, tc := range []struct {
		cfg   autopost.Config
		field string
		msg   string
	}{
		{autopost.Config{Mode: 7}, "Mode", "autopost: Config.Mode: unknown mode 7"},
		{autopost.Config{Interval: -time.Second}, "Interval", "autopost: Config.Interval: must not be negative"},
		{autopost.Config{Refresh: -1}, "Refresh", "autopost: Config.Refresh: must not be negative"},
		{autopost.Config{ReadyTimeout: -1}, "ReadyTimeout", "autopost: Config.ReadyTimeout: must not be negative"},
		{autopost.Config{ShardCount: -2}, "ShardCount", "autopost: Config.ShardCount: must not be negative"},
		{autopost.Config{MaxBackfill: 101}, "MaxBackfill", "autopost: Config.MaxBackfill: 101 is over 100 (one metrics batch)"},
	} {
		_, err := autopost.New(client, tc.cfg)
		var ce *autopost.ConfigError
		require.ErrorAs(t, err, &ce, "%+v", tc.cfg)
		assert.Equal(t, tc.field, ce.Field)
		assert.NotEmpty(t, ce.Problem)
		assert.EqualError(t, err, tc.msg)
	}
}
