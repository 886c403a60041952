package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// demoWebhookSecret signs the demo's webhooks (a real one comes from the
// project's webhook settings on Top.gg).
const demoWebhookSecret = "whs_demo_secret"

// demoHook stands for the internet between Top.gg and the bot: the fake
// Top.gg needs the receiver's URL before the bot listens (on a free port of
// 127.0.0.1, which it logs), so it delivers here, and demoHook forwards to
// the bot's receiver once the log said where it is (503 until then, which
// Top.gg retries).
type demoHook struct {
	srv    *httptest.Server
	client *http.Client
	target atomic.Pointer[string] // the bot's receiver address
}

func newDemoHook() *demoHook {
	h := &demoHook{client: &http.Client{Timeout: 10 * time.Second}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.forward))
	return h
}

// url is the receiver URL to give the fake Top.gg.
func (h *demoHook) url() string { return h.srv.URL + plugin.DefaultWebhookPath }

func (h *demoHook) close() {
	h.srv.Close()
	h.client.CloseIdleConnections()
}

func (h *demoHook) forward(w http.ResponseWriter, r *http.Request) {
	addr := h.target.Load()
	if addr == nil {
		http.Error(w, "the bot is not listening yet", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "reading the body", http.StatusBadRequest)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+*addr+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := h.client.Do(req)
	if err != nil {
		http.Error(w, "the bot is unreachable", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, io.LimitReader(resp.Body, 64<<10))
}

// hookAddrHandler is a slog.Handler that passes every record on and, from the
// plugin's "webhook receiver listening" record, tells demoHook the address.
type hookAddrHandler struct {
	slog.Handler
	hook *demoHook
}

func (h hookAddrHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "webhook receiver listening" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "addr" {
				addr := a.Value.String()
				h.hook.target.Store(&addr)
				return false
			}
			return true
		})
	}
	return h.Handler.Handle(ctx, r)
}

func (h hookAddrHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return hookAddrHandler{Handler: h.Handler.WithAttrs(attrs), hook: h.hook}
}

func (h hookAddrHandler) WithGroup(name string) slog.Handler {
	return hookAddrHandler{Handler: h.Handler.WithGroup(name), hook: h.hook}
}

// votes is the demo's vote part: two votes arrive by webhook and are
// rewarded at once; the poll reads them from the history and rewards nothing
// again; alice uses /vote, bob asks for a reminder; bob's vote expires: his
// role is taken back and he gets the reminder.
func (d *demo) votes(ctx context.Context, wait func(string, func() bool) error) error {
	alice, bob := "300000000000000001", "300000000000000002"
	// Start right after a poll, so that the webhook is the first to tell.
	polls := d.polls()
	if err := wait("a poll", func() bool { return d.polls() > polls }); err != nil {
		return err
	}
	now := time.Now()
	d.say("Two users vote on Top.gg: alice, and bob on a weekend (weight 2). A vote lasts 12 hours on Top.gg;\n" +
		"    for the demo bob's lasts 5 seconds. Top.gg sends each vote to the bot's webhook receiver, signed,\n" +
		"    and the bot gives each the voter role at once.")
	d.topgg.AddVote(
		topggtest.Vote{UserID: "800000000000000001", PlatformID: alice, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		topggtest.Vote{UserID: "800000000000000002", PlatformID: bob, Weight: 2, CreatedAt: now, ExpiresAt: now.Add(5 * time.Second)},
	)
	if err := wait("the roles", func() bool { return d.roleChanges(true) == 2 }); err != nil {
		return err
	}
	d.say("Both roles were given %d ms after the votes (source=webhook in the log above); Top.gg's deliveries were answered %s.",
		time.Since(now).Milliseconds(), d.deliveryStatuses())

	polls = d.polls()
	if err := wait("two polls", func() bool { return d.polls() >= polls+2 }); err != nil {
		return err
	}
	d.say("The bot polled the vote history since: it holds the same two votes (without the webhook's id, and with\n"+
		"    another timestamp format). The bot knows them: still %d role grants.", d.roleChanges(true))

	d.say("alice uses /vote; the bot answers from its vote cache, without asking Top.gg.")
	reply, err := d.useVote(ctx, alice, "alice", nil)
	if err != nil {
		return err
	}
	d.say("The bot replied (only alice sees it): %q", reply)

	on := true
	if reply, err = d.useVote(ctx, bob, "bob", &on); err != nil {
		return err
	}
	d.say("bob uses /vote remind:True, to get a direct message when he can vote again. The bot replied: %q", reply)

	d.say("bob's vote expires: the bot takes his role back. alice keeps hers.")
	if err := wait("bob's role to be taken back", func() bool { return d.roleChanges(false) == 1 }); err != nil {
		return err
	}
	dms, err := d.discord.WaitDirectMessages(ctx, bob, 1)
	if err != nil {
		return err
	}
	d.say("bob got a direct message: %q", dms[0].Content)
	if got := d.discord.MemberRoles(d.guilds[0], bob); len(got) != 0 {
		return fmt.Errorf("bob still has the roles %v", got)
	}
	if got := d.discord.MemberRoles(d.guilds[0], alice); len(got) != 1 {
		return fmt.Errorf("alice has the roles %v, want the voter role", got)
	}
	return nil
}

// useVote runs /vote as a user, with the remind option when given, and
// returns the bot's reply.
func (d *demo) useVote(ctx context.Context, user, name string, remind *bool) (string, error) {
	spec := discordtest.InteractionSpec{Command: "vote", GuildID: d.guilds[0], UserID: user, Username: name}
	if remind != nil {
		spec.Options = []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: remindOption, Type: discordgo.ApplicationCommandOptionBoolean, Value: *remind},
		}
	}
	id, _, err := d.discord.Interact(ctx, spec)
	if err != nil {
		return "", err
	}
	reply, err := d.discord.WaitInteractionReply(ctx, id)
	return reply.Content, err
}

// polls counts the vote history requests the fake Top.gg received.
func (d *demo) polls() int {
	n := 0
	for _, r := range d.topgg.Requests() {
		if r.Method == http.MethodGet && r.Path == "/v1/projects/@me/votes" {
			n++
		}
	}
	return n
}

// deliveryStatuses lists the answers to the webhook deliveries, e.g. "204, 204".
func (d *demo) deliveryStatuses() string {
	out := ""
	for i, del := range d.topgg.Deliveries() {
		if i > 0 {
			out += ", "
		}
		if n := len(del.Attempts); n > 0 {
			out += fmt.Sprint(del.Attempts[n-1].Status)
		} else {
			out += "none yet"
		}
	}
	return out
}
