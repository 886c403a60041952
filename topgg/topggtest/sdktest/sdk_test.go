// Package sdktest proves the standalone fake with a client nobody here wrote:
// the official @top-gg/sdk from npm (testdata/package.json pins 3.1.6),
// driven by testdata/conformance.cjs against cmd/topggfake.
package sdktest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

const installHint = "apt-get install nodejs npm && npm ci --ignore-scripts --prefix topgg/topggtest/sdktest/testdata"

// requireNode returns the path of node, or ends the test: skipped with the
// install command, or failed when CI is set (CI must run it).
func requireNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	msg := "node not found in PATH"
	if err == nil {
		if _, err = os.Stat(filepath.Join("testdata", "node_modules", "@top-gg", "sdk", "package.json")); err != nil {
			msg = "@top-gg/sdk is not installed in testdata/node_modules"
		}
	}
	if err == nil {
		return node
	}
	msg += "; to run the npm SDK conformance test: " + installHint
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: this test must not be skipped)")
	}
	t.Skip(msg)
	return ""
}

// TestOfficialNodeSDK: @top-gg/sdk 3.1.6 runs every v0 call of its Api
// against the standalone fake and receives its v0 webhooks (listener and
// middleware); the fake saw each call in the SDK's own form.
func TestOfficialNodeSDK(t *testing.T) {
	node := requireNode(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	bin := filepath.Join(t.TempDir(), "topggfake")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/dblkit/go-topgg/topgg/topggtest/cmd/topggfake").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	fake := exec.CommandContext(ctx, bin, "-votes", `[{"user_id":"900000000000000001","platform_id":"205680187394752512"}]`)
	var fakeErr testlog.Buffer
	fake.Stderr = &fakeErr
	fake.WaitDelay = 5 * time.Second
	stdout, err := fake.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, fake.Start())
	exited, lines := make(chan error, 1), make(chan map[string]string, 1)
	go func() {
		got := map[string]string{}
		sc := bufio.NewScanner(stdout)
		for len(got) < 3 && sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				got[k] = v
			}
		}
		lines <- got
		_, _ = io.Copy(io.Discard, stdout)
		exited <- fake.Wait()
	}()
	t.Cleanup(func() {
		_ = fake.Process.Kill()
		httpx.Within("the killed topggfake to exit", func() { <-exited })
	})
	var env map[string]string
	select {
	case env = <-lines:
		require.NotEmpty(t, env["TOPGG_FAKE_CONTROL"], "topggfake printed %v; stderr: %s", env, &fakeErr)
	case <-time.After(30 * time.Second):
		t.Fatalf("topggfake printed nothing within 30 s; stderr: %s", &fakeErr)
	}

	script := exec.CommandContext(ctx, node, "conformance.cjs")
	script.Dir = "testdata"
	script.Env = os.Environ()
	for k, v := range env {
		script.Env = append(script.Env, k+"="+v)
	}
	script.WaitDelay = 5 * time.Second
	out, err = script.CombinedOutput()
	require.NoError(t, err, "conformance.cjs:\n%s\ntopggfake: %s", out, &fakeErr)
	require.Contains(t, string(out), "ok: ")
	t.Logf("conformance.cjs: %s", bytes.TrimSpace(out))

	// At the wire, the SDK's forms: v0 paths without the bot id, the bare
	// token, its JSON body.
	res, err := http.Get(env["TOPGG_FAKE_CONTROL"] + "/requests")
	require.NoError(t, err)
	defer res.Body.Close()
	var reqs []struct {
		Method, Path, Body string
		Query              map[string][]string
		Header             http.Header
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&reqs))
	seen := map[string]bool{}
	for _, r := range reqs {
		seen[r.Method+" "+r.Path] = true
		if r.Method == http.MethodPost && r.Path == "/bots/stats" && strings.Contains(r.Body, "shard_id") {
			assert.JSONEq(t, `{"server_count":28,"shard_id":1,"shard_count":2}`, r.Body)
			assert.Equal(t, env["TOPGG_FAKE_TOKEN"], r.Header.Get("Authorization"), "the bare token")
		}
		if r.Path == "/bots/check" {
			assert.Len(t, r.Query["userId"], 1)
		}
	}
	bot := topggtest.DiscordBot().PlatformID
	for _, want := range []string{"POST /bots/stats", "GET /bots/" + bot + "/stats", "GET /bots/" + bot, "GET /bots/votes", "GET /bots/check", "GET /weekend", "GET /bots"} {
		assert.True(t, seen[want], "the SDK sent no %s; saw %v", want, seen)
	}

	require.NoError(t, fake.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "topggfake on SIGTERM: %s", &fakeErr)
		exited <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("topggfake did not stop within 10 s of SIGTERM")
	}
}
