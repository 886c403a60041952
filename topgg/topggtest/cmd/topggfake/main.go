// Command topggfake runs the fake Top.gg service of package topggtest as a
// server of its own, for a bot's tests in any language:
//
//	go run github.com/dblkit/go-topgg/topgg/topggtest/cmd/topggfake@latest
//
// Once it listens it prints three lines, TOPGG_FAKE_URL=<API root>,
// TOPGG_FAKE_TOKEN=<token> and TOPGG_FAKE_CONTROL=<control API root>, then
// serves until SIGTERM or SIGINT. Each flag (see -h: the address, token,
// project, votes already cast, v1 and v0 webhook receivers) defaults to its
// TOPGG_FAKE_* environment variable.
//
// A vote is {"user_id", "platform_id", "weight", "created_at", "expires_at",
// "query"}, all optional (RFC 3339 times; defaults: ids made up from the
// vote's number, weight 1, now, 12 hours later). The control API answers
// JSON, and {"error": ...} with a 400:
//
//	GET  /control                info: {"url", "token", "project"}
//	POST /control/votes          add a vote or an array of votes; webhooks follow
//	POST /control/webhooks       add a receiver: {"url", "secret"} (v1) or {"url", "authorization"} (v0)
//	POST /control/bots           list a bot in the v0 directory (a v0 bot object; "id" required)
//	POST /control/cursors/expire make every vote history cursor issued so far invalid (400)
//	POST /control/webhooks/test  send a webhook test to every receiver
//	POST /control/faults         inject a fault: {"method", "path", "times", "status", "retry_after",
//	                             "delay" (seconds), "drop", "body", "content_type", "header", "endless"}
//	GET  /control/requests       the requests received, as sent, with the status answered
//	GET  /control/deliveries     the webhooks sent, with their attempts
//
// It exits 0 once stopped, 2 on a flag it cannot read, 1 when the server cannot start.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func main() { os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr)) }

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("topggfake", flag.ContinueOnError)
	fs.SetOutput(stderr)
	str := func(name, env, def, usage string) *string {
		if v := getenv(env); v != "" {
			def = v
		}
		return fs.String(name, def, usage+" ($"+env+")")
	}
	addr := str("addr", "TOPGG_FAKE_ADDR", "127.0.0.1:0", "listen `address`")
	token := str("token", "TOPGG_FAKE_TOKEN", "", "the `token` accepted (default: a project token of the project)")
	project := str("project", "TOPGG_FAKE_PROJECT", "bot", "bot, server, game, or a JSON object over the bot")
	votes := str("votes", "TOPGG_FAKE_VOTES", "", "votes already cast: a JSON array, or @file")
	hook := str("webhook", "TOPGG_FAKE_WEBHOOK_URL", "", "`URL` of a v1 webhook receiver")
	secret := str("webhook-secret", "TOPGG_FAKE_WEBHOOK_SECRET", "", "its whs_ `secret`")
	legacy := str("legacy-webhook", "TOPGG_FAKE_LEGACY_WEBHOOK_URL", "", "`URL` of a v0 webhook receiver")
	auth := str("legacy-webhook-auth", "TOPGG_FAKE_LEGACY_WEBHOOK_AUTH", "", "its Authorization `value`")
	verbose := fs.Bool("v", false, "log requests to stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	p, err := parseProject(*project)
	vs, votesErr := parseVotes(*votes)
	if err = cmp.Or(err, votesErr); err != nil {
		fmt.Fprintln(stderr, "topggfake:", err)
		return 2
	}

	opts := []topggtest.Option{topggtest.WithAddr(*addr), topggtest.WithToken(*token), topggtest.WithProject(p),
		topggtest.WithControlAPI()}
	if *verbose {
		opts = append(opts, topggtest.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}

	// Before listening: a SIGTERM sent as soon as the URL is read is caught.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := topggtest.NewServer(opts...)
	if err != nil {
		fmt.Fprintln(stderr, "topggfake:", err)
		return 1
	}
	defer srv.Close()
	srv.AddVote(vs...) // before the receivers: the votes already cast send no webhook
	if *hook != "" || *secret != "" {
		err = srv.AddWebhook(*hook, *secret)
	}
	if err == nil && (*legacy != "" || *auth != "") {
		err = srv.AddLegacyWebhook(*legacy, *auth)
	}
	if err != nil {
		fmt.Fprintln(stderr, "topggfake:", err)
		return 1
	}
	fmt.Fprintf(stdout, "TOPGG_FAKE_URL=%s\nTOPGG_FAKE_TOKEN=%s\nTOPGG_FAKE_CONTROL=%s/control\n",
		srv.URL, srv.Token(), strings.TrimSuffix(srv.URL, "/api"))
	<-ctx.Done()
	return 0
}

// parseProject reads -project: a preset's name, or JSON over the bot preset
// (the names of GET /v1/projects/@me, and platform_id).
func parseProject(spec string) (topggtest.Project, error) {
	presets := map[string]func() topggtest.Project{
		"bot": topggtest.DiscordBot, "server": topggtest.DiscordServer, "game": topggtest.RobloxGame,
	}
	if preset, ok := presets[spec]; ok {
		return preset(), nil
	}
	p := topggtest.DiscordBot()
	if err := decodeStrict([]byte(spec), &p); err != nil {
		return p, fmt.Errorf("-project: want bot, server, game or a JSON object: %w", err)
	}
	return p, nil
}

// parseVotes reads -votes: a JSON array of votes, or @file holding one.
func parseVotes(spec string) ([]topggtest.Vote, error) {
	if spec == "" {
		return nil, nil
	}
	data := []byte(spec)
	if name, ok := strings.CutPrefix(spec, "@"); ok {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			return nil, fmt.Errorf("-votes: %w", err)
		}
	}
	var votes []struct {
		topggtest.Vote
		Query string `json:"query"` // accepted as in the control API; -votes sends no webhook to carry it
	}
	if err := decodeStrict(data, &votes); err != nil {
		return nil, fmt.Errorf("-votes: want a JSON array of votes: %w", err)
	}
	out := make([]topggtest.Vote, len(votes))
	for i, v := range votes {
		out[i] = v.Vote
	}
	return out, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
