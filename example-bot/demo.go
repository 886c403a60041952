package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterperks"
)

// demoTimeout bounds the whole demo; each step waits for what it shows, not a fixed time.
const demoTimeout = 60 * time.Second

// demoWebhookSecret signs the demo's webhooks.
const demoWebhookSecret = "whs_demo_secret"

// demo is the offline demo: the real bot against in-process fakes, a script of
// events, and a narrator that says what to look for.
type demo struct {
	out     io.Writer
	discord *discordtest.Server
	topgg   *topggtest.Server
	guilds  []string
	plugin  chan *plugin.Plugin // the bot's, once made
	wait    func(what string, cond func() bool) error
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.out, "\n>>> "+format+"\n", args...) }

// runDemo runs the bot with a 2-shard fake Discord and a fake Top.gg, makes guilds
// join, leave and go down, adds votes, uses /vote, and waits for each effect.
func runDemo(ctx context.Context, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	const shards, role = 2, "900000000000000777"
	guilds := []string{discordtest.GuildIDForShard(1, 0, shards), discordtest.GuildIDForShard(2, 0, shards), discordtest.GuildIDForShard(3, 1, shards)}
	dsrv, err := discordtest.NewServer(discordtest.WithShardCount(shards), discordtest.WithGuilds(guilds...))
	if err != nil {
		return err
	}
	defer dsrv.Close()
	project := topggtest.DiscordBot()
	project.PlatformID = dsrv.BotUserID()
	tsrv, err := topggtest.NewServer(topggtest.WithProject(project))
	if err != nil {
		return err
	}
	defer tsrv.Close()
	dir, err := os.MkdirTemp("", "topgg-demo-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	cfg := config{
		DiscordToken: plugin.NewSecret(dsrv.Token()), TopggToken: plugin.NewSecret(tsrv.Token()), TopggAPIURL: tsrv.URL, DiscordAPIURL: dsrv.APIBase(),
		RewardGuildID: discordID(guilds[0]), RewardRoleID: role, ShardCount: shards, LogLevel: "info", LogFormat: "text",
		Plugin: plugin.Config{AutopostInterval: time.Second, VotePollInterval: new(time.Second), StateDir: dir,
			WebhookAddr: "127.0.0.1:0", WebhookSecrets: plugin.WebhookSecrets{demoWebhookSecret}},
	}
	d := &demo{out: out, discord: dsrv, topgg: tsrv, guilds: guilds, plugin: make(chan *plugin.Plugin, 1)}
	d.say("A fake Top.gg and a fake Discord run in this process (nothing leaves the machine).\n" +
		"    The bot starts with 2 shards and 3 servers, posting every second and polling votes every second\n" +
		"    (a real bot posts every 30 minutes and polls every minute). Its webhook receiver listens on 127.0.0.1.\n" +
		"    Lines without >>> are the bot's own log.")

	botCtx, stopBot := context.WithCancel(ctx)
	defer stopBot()
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	done := make(chan error, 1)
	go func() { done <- runBot(botCtx, cfg, log, func(p *plugin.Plugin) { d.plugin <- p }) }()
	d.wait = waiter(ctx, done)
	if err := d.script(ctx); err != nil {
		stopBot()
		<-done
		return err
	}
	d.say("Stopping the bot, as on SIGTERM: the jobs stop, the vote state is saved, the shards close.")
	stopBot()
	if err := <-done; err != nil {
		return err
	}
	d.say("Done. Top.gg received %d metrics posts; Discord saw %d role changes. Run `go test -race ./...` next.",
		len(tsrv.Metrics()), len(dsrv.RoleChanges()))
	return nil
}

// waiter returns the demo's wait: it polls cond until it holds, and fails
// when the bot stops (done) or ctx ends first.
func waiter(ctx context.Context, done <-chan error) func(what string, cond func() bool) error {
	return func(what string, cond func() bool) error {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for !cond() {
			select {
			case err := <-done:
				return fmt.Errorf("the bot stopped while waiting for %s: %v", what, err)
			case <-ctx.Done():
				return fmt.Errorf("timed out waiting for %s", what)
			case <-t.C:
			}
		}
		return nil
	}
}

// script drives the story, checking each step on the fakes.
func (d *demo) script(ctx context.Context) error {
	if err := d.wait("the first post", func() bool { return d.lastMetric("server_count") == 3 }); err != nil {
		return err
	}
	d.say("Both shards are ready, and Top.gg shows %d servers and %d shards.", d.lastMetric("server_count"), d.lastMetric("shard_count"))
	if err := d.wait("command sync", func() bool { _, ok := d.topgg.Commands(); return ok }); err != nil {
		return err
	}
	cmds, _ := d.topgg.Commands()
	d.say("The bot registered its slash commands on Discord and published the same to Top.gg: %s", cmds)
	if err := d.guildChanges(ctx); err != nil {
		return err
	}
	return d.votes(ctx)
}

// guildChanges adds, removes and takes down servers, checking Top.gg after each.
func (d *demo) guildChanges(ctx context.Context) error {
	change := func(act func(context.Context, string) error, guild string, servers int) error {
		before := len(d.topgg.Metrics())
		if err := act(ctx, guild); err != nil {
			return err
		}
		return d.wait(fmt.Sprintf("%d servers", servers), func() bool {
			return d.lastMetric("server_count") == servers && len(d.topgg.Metrics()) > before
		})
	}
	for _, c := range []struct {
		say    string
		act    func(context.Context, string) error
		guild  string
		expect int
	}{
		{"Two servers add the bot.", d.discord.Join, discordtest.GuildIDForShard(4, 0, 2), 4},
		{"", d.discord.Join, discordtest.GuildIDForShard(5, 1, 2), 5},
		{"A server removes the bot: the count goes down.", d.discord.Remove, d.guilds[1], 4},
	} {
		if c.say != "" {
			d.say("%s", c.say)
		}
		if err := change(c.act, c.guild, c.expect); err != nil {
			return err
		}
	}
	d.say("A server has a Discord outage: it still counts (a cache-based count would drop it).")
	if err := d.discord.Outage(ctx, d.guilds[2]); err != nil {
		return err
	}
	// Nothing new is posted (an unchanged count is not posted again); give the bot two intervals to prove it.
	select {
	case <-time.After(2500 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	if got := d.lastMetric("server_count"); got != 4 {
		return fmt.Errorf("after the outage Top.gg shows %d servers, want 4", got)
	}
	d.say("Top.gg shows %d servers.", d.lastMetric("server_count"))
	return nil
}

// connectWebhook gives the fake Top.gg the receiver's URL, as an owner pastes
// it into the project's settings (Plugin.WebhookAddr tells the free port).
func (d *demo) connectWebhook(ctx context.Context) error {
	var p *plugin.Plugin
	select {
	case p = <-d.plugin:
	case <-ctx.Done():
		return fmt.Errorf("timed out waiting for the plugin: %w", ctx.Err())
	}
	if err := d.wait("the webhook receiver", func() bool { return p.WebhookAddr() != nil }); err != nil {
		return err
	}
	url := "http://" + p.WebhookAddr().String() + plugin.DefaultWebhookPath
	if err := d.topgg.AddWebhook(url, demoWebhookSecret); err != nil {
		return err
	}
	d.say("The bot's webhook receiver listens at %s; the project's webhook settings on Top.gg get that URL.", url)
	return nil
}

// votes: two votes come by webhook, rewarded at once, and the poll rewards
// nothing again; alice uses /vote, bob asks for a reminder; bob's vote expires.
func (d *demo) votes(ctx context.Context) error {
	alice, bob := "300000000000000001", "300000000000000002"
	if err := d.connectWebhook(ctx); err != nil {
		return err
	}
	// Start right after a poll, so that the webhook is the first to tell.
	polls := d.polls()
	if err := d.wait("a poll", func() bool { return d.polls() > polls }); err != nil {
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
	if err := d.wait("the roles", func() bool { return d.roleChanges(true) == 2 }); err != nil {
		return err
	}
	var answers []string
	for _, del := range d.topgg.Deliveries() {
		answers = append(answers, "none yet")
		if n := len(del.Attempts); n > 0 {
			answers[len(answers)-1] = fmt.Sprint(del.Attempts[n-1].Status)
		}
	}
	d.say("Both roles were given %d ms after the votes (source=webhook in the log above); Top.gg's deliveries were answered %s.",
		time.Since(now).Milliseconds(), strings.Join(answers, ", "))

	polls = d.polls()
	if err := d.wait("two polls", func() bool { return d.polls() >= polls+2 }); err != nil {
		return err
	}
	d.say("The bot polled the vote history since: it holds the same two votes (without the webhook's id, and with\n"+
		"    another timestamp format). The bot knows them: still %d role grants.", d.roleChanges(true))

	d.say("alice uses /vote; the bot answers from its vote cache, without asking Top.gg.")
	reply, err := d.useCommand(ctx, "vote", alice, "alice", nil)
	if err != nil {
		return err
	}
	d.say("The bot replied (only alice sees it): %q", reply)
	if reply, err = d.useCommand(ctx, "leaderboard", alice, "alice", nil); err != nil {
		return err
	}
	d.say("alice uses /leaderboard, this month's top voters from the bot's vote ledger. The bot replied: %q", reply)
	if reply, err = d.useCommand(ctx, "vote", bob, "bob", new(true)); err != nil {
		return err
	}
	d.say("bob uses /vote remind:True, to get a direct message when he can vote again. The bot replied: %q", reply)

	d.say("bob's vote expires: the bot takes his role back. alice keeps hers.")
	if err := d.wait("bob's role to be taken back", func() bool { return d.roleChanges(false) == 1 }); err != nil {
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

// useCommand runs a command as a user, with /vote's remind when given, and returns the reply.
func (d *demo) useCommand(ctx context.Context, command, user, name string, remind *bool) (string, error) {
	spec := discordtest.InteractionSpec{Command: command, GuildID: d.guilds[0], UserID: user, Username: name}
	if remind != nil {
		spec.Options = []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: voterperks.RemindOption, Type: discordgo.ApplicationCommandOptionBoolean, Value: *remind},
		}
	}
	id, _, err := d.discord.Interact(ctx, spec)
	if err != nil {
		return "", err
	}
	reply, err := d.discord.WaitInteractionReply(ctx, id)
	return reply.Content, err
}

func (d *demo) lastMetric(name string) int {
	m := d.topgg.Metrics()
	for i := len(m) - 1; i >= 0; i-- {
		if v, ok := m[i].Metrics[name]; ok {
			return v
		}
	}
	return -1
}

func (d *demo) roleChanges(added bool) (n int) {
	for _, c := range d.discord.RoleChanges() {
		if c.Added == added {
			n++
		}
	}
	return n
}

// polls counts the vote history requests the fake Top.gg received.
func (d *demo) polls() (n int) {
	for _, r := range d.topgg.Requests() {
		if r.Method == http.MethodGet && r.Path == "/v1/projects/@me/votes" {
			n++
		}
	}
	return n
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
