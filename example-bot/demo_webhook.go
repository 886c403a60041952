package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// demoWebhookSecret signs the demo's webhooks (a real one comes from the
// project's webhook settings on Top.gg).
const demoWebhookSecret = "whs_demo_secret"

// connectWebhook gives the fake Top.gg the URL of the bot's webhook
// receiver, as an owner pastes it into the project's webhook settings: the
// plugin's own server listens on a free port of 127.0.0.1, which
// Plugin.WebhookAddr tells once Run listens.
func (d *demo) connectWebhook(ctx context.Context, wait func(string, func() bool) error) error {
	var p *plugin.Plugin
	select {
	case p = <-d.plugin:
	case <-ctx.Done():
		return fmt.Errorf("timed out waiting for the plugin: %w", ctx.Err())
	}
	if err := wait("the webhook receiver", func() bool { return p.WebhookAddr() != nil }); err != nil {
		return err
	}
	url := "http://" + p.WebhookAddr().String() + plugin.DefaultWebhookPath
	if err := d.topgg.AddWebhook(url, demoWebhookSecret); err != nil {
		return err
	}
	d.say("The bot's webhook receiver listens at %s; the project's webhook settings on Top.gg get that URL.", url)
	return nil
}

// votes is the demo's vote part: two votes arrive by webhook and are
// rewarded at once; the poll reads them from the history and rewards nothing
// again; alice uses /vote, bob asks for a reminder; bob's vote expires: his
// role is taken back and he gets the reminder.
func (d *demo) votes(ctx context.Context, wait func(string, func() bool) error) error {
	alice, bob := "300000000000000001", "300000000000000002"
	if err := d.connectWebhook(ctx, wait); err != nil {
		return err
	}
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
