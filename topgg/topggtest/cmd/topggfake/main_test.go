package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// wait bounds every wait of these tests.
const wait = 15 * time.Second

// bin is the command, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "topggfake")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "topggfake")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput()
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// fake is a running topggfake process.
type fake struct {
	URL, Token, Control string

	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	stderr bytes.Buffer
}

func (f *fake) Stderr() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stderr.String()
}

type lockedWriter struct{ f *fake }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	return w.f.stderr.Write(p)
}

// start runs the command with env (besides this process's, without any
// TOPGG_FAKE_ variable) and args, and waits for the lines it prints.
func start(t *testing.T, env []string, args ...string) *fake {
	t.Helper()
	f := &fake{cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOPGG_FAKE_") {
			f.cmd.Env = append(f.cmd.Env, kv)
		}
	}
	f.cmd.Env = append(f.cmd.Env, env...)
	f.cmd.Stderr = lockedWriter{f}
	stdout, err := f.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, f.cmd.Start())
	t.Cleanup(func() {
		_ = f.cmd.Process.Kill()
		httpx.Within("the killed topggfake to exit", func() { <-f.exited })
	})

	lines := make(chan map[string]string, 1)
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
		_ = f.cmd.Wait()
		close(f.exited)
	}()
	select {
	case got := <-lines:
		f.URL, f.Token, f.Control = got["TOPGG_FAKE_URL"], got["TOPGG_FAKE_TOKEN"], got["TOPGG_FAKE_CONTROL"]
		require.NotEmpty(t, f.URL, "stdout: %v; stderr: %s", got, f.Stderr())
	case <-time.After(wait):
		t.Fatalf("topggfake printed no URL within %s; stderr: %s", wait, f.Stderr())
	}
	return f
}

// stop sends SIGTERM and requires a clean exit.
func (f *fake) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, f.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-f.exited:
	case <-time.After(wait):
		t.Fatalf("topggfake did not stop within %s of SIGTERM", wait)
	}
	require.Equal(t, 0, f.cmd.ProcessState.ExitCode(), f.Stderr())
}

func (f *fake) client(t *testing.T) *topgg.Client {
	t.Helper()
	c, err := topgg.New(f.Token, topgg.WithBaseURL(f.URL), topgg.WithRetryPolicy(topgg.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	return c
}

// call makes a request to the control API and returns the status and body.
func (f *fake) call(t *testing.T, method, path, body string) (int, string) {
	return testkit.Do(t, method, f.Control+path, body)
}

// TestDefaults: with no flag, a bot project on a free loopback port, its
// project token printed; the official forms work; SIGTERM stops it cleanly
// and closes the port.
func TestDefaults(t *testing.T) {
	t.Parallel()
	f := start(t, nil)
	require.Regexp(t, regexp.MustCompile(`^http://127\.0\.0\.1:\d+/api$`), f.URL)
	require.Equal(t, topggtest.ProjectToken(topggtest.DiscordBot().ID), f.Token)
	require.Equal(t, strings.TrimSuffix(f.URL, "/api")+"/control", f.Control)

	c := f.client(t)
	p, err := c.Project(t.Context())
	require.NoError(t, err)
	require.Equal(t, topggtest.DiscordBot().ID, p.ID)
	require.NoError(t, c.Legacy().PostStats(t.Context(), topggtest.DiscordBot().PlatformID, topgg.BotStats{ServerCount: 12}))

	f.stop(t)
	_, err = http.Get(f.URL + "/bots")
	require.Error(t, err, "the port is closed")
}

// TestFlagsOverEnvironment: every setting comes from a flag or, without
// one, its environment variable; seeded votes come from a file.
func TestFlagsOverEnvironment(t *testing.T) {
	t.Parallel()
	created := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	votes := filepath.Join(t.TempDir(), "votes.json")
	require.NoError(t, os.WriteFile(votes, fmt.Appendf(nil,
		`[{"user_id":"1","platform_id":"205680187394752512","weight":2,"created_at":%q},{"user_id":"2","platform_id":"3"}]`,
		created.Format(time.RFC3339)), 0o600))
	f := start(t, []string{"TOPGG_FAKE_TOKEN=token-from-env", "TOPGG_FAKE_PROJECT=game", "TOPGG_FAKE_VOTES=@" + votes},
		"-project", `{"id":"1","name":"Mine","platform_id":"42"}`)
	require.Equal(t, "token-from-env", f.Token)

	c := f.client(t)
	p, err := c.Project(t.Context())
	require.NoError(t, err)
	require.Equal(t, "1", p.ID, "the flag wins over the environment")
	require.Equal(t, "Mine", p.Name)
	require.Equal(t, "bot", string(p.Type), "JSON over the bot")
	page, err := c.Votes(t.Context(), topgg.VotesQuery{StartDate: created})
	require.NoError(t, err)
	require.Len(t, page.Votes, 2)
	require.Equal(t, 2, page.Votes[0].Weight)
	voted, err := c.Legacy().HasVoted(t.Context(), "42", "205680187394752512")
	require.NoError(t, err)
	require.True(t, voted)

	status, body := f.call(t, http.MethodGet, "", "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `"platform_id":"42"`)
	f.stop(t)
}

// TestControlAPIOverHTTP: the webhook flags, then votes, a webhook test and
// a fault over the control API, and the record of what was sent.
func TestControlAPIOverHTTP(t *testing.T) {
	t.Parallel()
	const secret = "whs_topggfake_test_secret"
	v1 := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{secret}})
	v0 := testkit.NewReceiver(t, webhook.Config{LegacyAuth: "v0-auth"})
	f := start(t, []string{"TOPGG_FAKE_WEBHOOK_SECRET=" + secret},
		"-webhook", v1.URL, "-legacy-webhook", v0.URL, "-legacy-webhook-auth", "v0-auth")

	status, body := f.call(t, http.MethodPost, "/votes", `{"user_id":"7","platform_id":"205680187394752512","query":"ref=abc"}`)
	require.Equal(t, http.StatusNoContent, status, body)
	require.Eventually(t, func() bool { return len(v1.Votes()) == 1 && len(v0.Votes()) == 1 }, wait, 10*time.Millisecond)
	assert.Equal(t, map[string]string{"ref": "abc"}, v1.Votes()[0].Query)
	assert.Equal(t, 1, v1.Votes()[0].Version)
	assert.Equal(t, "205680187394752512", v0.Votes()[0].PlatformID)
	status, body = f.call(t, http.MethodPost, "/webhooks/test", "")
	require.Equal(t, http.StatusNoContent, status, body)
	require.Eventually(t, func() bool { return len(v0.Votes()) == 2 }, wait, 10*time.Millisecond)
	assert.True(t, v0.Votes()[1].Test)

	status, body = f.call(t, http.MethodPost, "/faults", `{"path":"/v1/projects/@me","status":503}`)
	require.Equal(t, http.StatusNoContent, status, body)
	_, err := f.client(t).Project(t.Context())
	var apiErr *topgg.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	require.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)

	status, body = f.call(t, http.MethodGet, "/requests", "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `"path":"/v1/projects/@me"`)
	// A vote and a test to each receiver, the last one perhaps still going.
	require.Eventually(t, func() bool { // no require in here: it runs on its own goroutine
		res, err := http.Get(f.Control + "/deliveries")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		return err == nil && res.StatusCode == http.StatusOK && strings.Count(string(raw), `"delivered":true`) == 4
	}, wait, 10*time.Millisecond, "four deliveries, each delivered")
	f.stop(t)
}

// TestVerboseLogsRequestsNeverTheToken: -v logs each request to stderr.
func TestVerboseLogsRequestsNeverTheToken(t *testing.T) {
	t.Parallel()
	f := start(t, nil, "-v")
	_, err := f.client(t).Project(t.Context())
	require.NoError(t, err)
	f.stop(t)
	assert.Contains(t, f.Stderr(), "path=/v1/projects/@me")
	assert.NotContains(t, f.Stderr(), f.Token)
}

// TestBadConfiguration: a setting it cannot use stops it before it prints
// anything, with the reason on stderr: 2 for a flag it cannot read, 1 for a
// server that cannot start.
func TestBadConfiguration(t *testing.T) {
	t.Parallel()
	busy, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(busy.Close)
	busyAddr := strings.TrimSuffix(strings.TrimPrefix(busy.URL, "http://"), "/api")

	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
		says string
	}{
		{"unknown flag", nil, []string{"-nope"}, 2, "flag provided but not defined"},
		{"project name", nil, []string{"-project", "robot"}, 2, "-project"},
		{"project member", []string{`TOPGG_FAKE_PROJECT={"idd":"1"}`}, nil, 2, "unknown field"},
		{"votes JSON", nil, []string{"-votes", `[{"user_id":1}]`}, 2, "-votes"},
		{"votes file", nil, []string{"-votes", "@/nonexistent/votes.json"}, 2, "no such file"},
		{"secret without URL", []string{"TOPGG_FAKE_WEBHOOK_SECRET=whs_x"}, nil, 1, "webhook URL"},
		{"bad secret", nil, []string{"-webhook", "http://127.0.0.1:1/hook", "-webhook-secret", "secret"}, 1, "whs_"},
		{"legacy without auth", nil, []string{"-legacy-webhook", "http://127.0.0.1:1/hook"}, 1, "Authorization"},
		{"address in use", nil, []string{"-addr", busyAddr}, 1, "listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tc.args...)
			cmd.Env = append(os.Environ(), tc.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%v; stderr: %s", err, stderr.String())
			assert.Equal(t, tc.code, exit.ExitCode(), stderr.String())
			assert.Contains(t, stderr.String(), tc.says)
			assert.Empty(t, stdout.String())
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-h"}, func(string) string { return "" }, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "TOPGG_FAKE_WEBHOOK_SECRET")
	assert.Empty(t, stdout.String())
}
