package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestMetricsAddr: METRICS_ADDR is unset by default (no server), a host:port
// when set; anything else exits 2 naming it, before any network call.
func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(validEnv("https://example.invalid")))
	require.NoError(t, err)
	assert.Empty(t, cfg.MetricsAddr)
	_, o, err := newClient(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	assert.Nil(t, o, "no METRICS_ADDR, no server")

	for _, good := range []string{":9090", "127.0.0.1:0", "[::1]:9090"} {
		assert.NoError(t, plugin.CheckAddr(good), good)
	}
	for _, bad := range []string{"9090", "localhost", "http://127.0.0.1:9090", ":"} {
		env := validEnv("https://example.invalid")
		env["METRICS_ADDR"] = bad
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), nil, envconfig.MapLookuper(env), &stdout, &stderr)
		assert.Equal(t, exitConfig, code, bad)
		assert.True(t, strings.HasPrefix(stderr.String(), "example-bot: configuration: METRICS_ADDR: "), "%q", stderr.String())
	}
}

// TestMetricsAddrInUse: a METRICS_ADDR another process holds fails the
// start, naming the variable.
func TestMetricsAddrInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	cfg := config{MetricsAddr: l.Addr().String(), Env: plugin.Env{TopggToken: plugin.NewCredential("token"), TopggAPIURL: "https://top.gg/api"}}
	client, o, err := newClient(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	p, err := plugin.New(client, plugin.Config{}, plugin.WithState(voterewards.NewMemoryStore()))
	require.NoError(t, err)
	_, err = o.start(context.Background(), l.Addr().String(), p, slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "METRICS_ADDR")
}
