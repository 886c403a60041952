package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterperks"
)

const (
	demoTimeout       = 60 * time.Second  // the whole demo; each step waits for what it shows, not a fixed time
	demoWebhookSecret = "whs_demo_secret" // signs the demo's webhooks
)

// demo is the offline demo: the real bot against in-process fakes, a script of
// events, and a narrator that says what to look for. Its first failure sticks
// (err): every later step and line is skipped, and runDemo returns it.
type demo struct {
	ctx     context.Context
	out     io.Writer
	discord *discordtest.Server
	topgg   *topggtest.Server
	guilds  []string
	plugin  atomic.Pointer[plugin.Plugin] // the bot's, once made
	done    chan error                    // the bot's runBot; a wait that reads it puts it back
	err     error
}

// say narrates, unless a step failed.
func (d *demo) say(format string, args ...any) {
	if d.err == nil {
		fmt.Fprintf(d.out, "\n>>> "+format+"\n", args...)
	}
}

// check records err as the demo's failure if it is the first; it reports
// whether the demo goes on.
func (d *demo) check(err error) bool {
	if d.err == nil {
		d.err = err
	}
	return d.err == nil
}

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

	cfg := config{Env: plugin.Env{
		DiscordToken: plugin.NewSecret(dsrv.Token()), TopggToken: plugin.NewSecret(tsrv.Token()), TopggAPIURL: tsrv.URL,
		DiscordAPIURL: dsrv.APIBase(), ShardCount: shards, StateDir: dir,
		Config: plugin.Config{AutopostInterval: time.Second, VotePollInterval: new(time.Second),
			WebhookAddr: "127.0.0.1:0", WebhookSecrets: plugin.WebhookSecrets{demoWebhookSecret}},
	}, RewardGuildID: plugin.Snowflake(guilds[0]), RewardRoleID: role}
	d := &demo{ctx: ctx, out: out, discord: dsrv, topgg: tsrv, guilds: guilds, done: make(chan error, 1)}
	d.say("A fake Top.gg and a fake Discord run in this process (nothing leaves the machine).\n" +
		"    The bot starts with 2 shards and 3 servers, posting every second and polling votes every second\n" +
		"    (a real bot posts every 30 minutes and polls every minute). Its webhook receiver listens on 127.0.0.1.\n" +
		"    Lines without >>> are the bot's own log.")
	botCtx, stopBot := context.WithCancel(ctx)
	defer stopBot()
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	b, err := newBot(cfg, envconfig.MapLookuper(nil), log)
	if err != nil {
		return err
	}
	go func() { d.done <- b.run(botCtx, d.plugin.Store) }()
	d.guildChanges()
	d.votes()
	d.say("Stopping the bot, as on SIGTERM: the jobs stop, the vote state is saved, the shards close.")
	stopBot()
	d.check(<-d.done)
	d.say("Done. Top.gg received %d metrics posts; Discord saw %d role changes. Run `go test -race ./...` next.",
		len(tsrv.Metrics()), len(dsrv.RoleChanges()))
	return d.err
}

// wait polls cond until it holds, and fails when the bot stops or the demo
// times out first; it reports whether the demo goes on.
func (d *demo) wait(what string, cond func() bool) bool {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for d.err == nil && !cond() {
		select {
		case err := <-d.done:
			d.done <- err
			d.check(fmt.Errorf("the bot stopped while waiting for %s: %v", what, err))
		case <-d.ctx.Done():
			d.check(fmt.Errorf("timed out waiting for %s", what))
		case <-t.C:
		}
	}
	return d.err == nil
}

// guildChanges: the first post and the commands, then servers are added,
// removed and taken down, checking Top.gg after each.
func (d *demo) guildChanges() {
	d.wait("the first post", func() bool { return d.lastMetric("server_count") == 3 })
	d.say("Both shards are ready, and Top.gg shows %d servers and %d shards.", d.lastMetric("server_count"), d.lastMetric("shard_count"))
	d.wait("command sync", func() bool { _, ok := d.topgg.Commands(); return ok })
	cmds, _ := d.topgg.Commands()
	d.say("The bot registered its slash commands on Discord and published the same to Top.gg: %s", cmds)
	d.say("Two servers add the bot.")
	d.change(d.discord.Join, discordtest.GuildIDForShard(4, 0, 2), 4)
	d.change(d.discord.Join, discordtest.GuildIDForShard(5, 1, 2), 5)
	d.say("A server removes the bot: the count goes down.")
	d.change(d.discord.Remove, d.guilds[1], 4)
	d.say("A server has a Discord outage: it still counts (a cache-based count would drop it).")
	d.check(d.discord.Outage(d.ctx, d.guilds[2]))
	// Nothing new is posted (an unchanged count is not posted again); give the bot two intervals to prove it.
	until := time.Now().Add(2500 * time.Millisecond)
	d.wait("two intervals", func() bool { return time.Now().After(until) })
	if got := d.lastMetric("server_count"); got != 4 {
		d.check(fmt.Errorf("after the outage Top.gg shows %d servers, want 4", got))
	}
	d.say("Top.gg shows %d servers.", d.lastMetric("server_count"))
}

// change acts on guild and waits for Top.gg to get a new post of servers.
func (d *demo) change(act func(context.Context, string) error, guild string, servers int) {
	before := len(d.topgg.Metrics())
	d.check(act(d.ctx, guild))
	d.wait(fmt.Sprintf("%d servers", servers), func() bool {
		return d.lastMetric("server_count") == servers && len(d.topgg.Metrics()) > before
	})
}

// votes: two votes come by webhook, rewarded at once, and the poll rewards
// nothing again; alice uses /vote and /leaderboard, bob asks for a reminder;
// bob's vote expires, and he gets his reminder.
func (d *demo) votes() {
	alice, bob := "300000000000000001", "300000000000000002"
	// The project's webhook settings on Top.gg get the receiver's URL (WebhookAddr tells the free port).
	if !d.wait("the webhook receiver", func() bool { return d.plugin.Load() != nil && d.plugin.Load().WebhookAddr() != nil }) {
		return
	}
	url := "http://" + d.plugin.Load().WebhookAddr().String() + plugin.DefaultWebhookPath
	d.check(d.topgg.AddWebhook(url, demoWebhookSecret))
	d.say("The bot's webhook receiver listens at %s; the project's webhook settings on Top.gg get that URL.", url)
	d.waitPolls(1) // start right after a poll, so that the webhook is the first to tell
	now := time.Now()
	d.say("Two users vote on Top.gg: alice, and bob on a weekend (weight 2). A vote lasts 12 hours on Top.gg;\n" +
		"    for the demo bob's lasts 5 seconds. Top.gg sends each vote to the bot's webhook receiver, signed,\n" +
		"    and the bot gives each the voter role at once.")
	d.topgg.AddVote(
		topggtest.Vote{UserID: "800000000000000001", PlatformID: alice, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		topggtest.Vote{UserID: "800000000000000002", PlatformID: bob, Weight: 2, CreatedAt: now, ExpiresAt: now.Add(5 * time.Second)},
	)
	d.wait("the roles", func() bool { return d.roleChanges(true) == 2 })
	var answers []string
	for _, del := range d.topgg.Deliveries() {
		answers = append(answers, "none yet")
		if n := len(del.Attempts); n > 0 {
			answers[len(answers)-1] = fmt.Sprint(del.Attempts[n-1].Status)
		}
	}
	d.say("Both roles were given %d ms after the votes (source=webhook in the log above); Top.gg's deliveries were answered %s.",
		time.Since(now).Milliseconds(), strings.Join(answers, ", "))
	d.waitPolls(2)
	d.say("The bot polled the vote history since: it holds the same two votes (without the webhook's id, and with\n"+
		"    another timestamp format). The bot knows them: still %d role grants.", d.roleChanges(true))

	d.say("alice uses /vote; the bot answers from its vote cache, without asking Top.gg.")
	d.say("The bot replied (only alice sees it): %q", d.useCommand("vote", alice, "alice", false))
	d.say("alice uses /leaderboard, this month's top voters from the bot's vote ledger. The bot replied: %q",
		d.useCommand("leaderboard", alice, "alice", false))
	d.say("bob uses /vote remind:True, to get a direct message when he can vote again. The bot replied: %q",
		d.useCommand("vote", bob, "bob", true))
	d.say("bob's vote expires: the bot takes his role back. alice keeps hers.")
	if !d.wait("bob's role to be taken back", func() bool { return d.roleChanges(false) == 1 }) {
		return
	}
	if dms, err := d.discord.WaitDirectMessages(d.ctx, bob, 1); d.check(err) {
		d.say("bob got a direct message: %q", dms[0].Content)
	}
	if got := d.discord.MemberRoles(d.guilds[0], bob); len(got) != 0 {
		d.check(fmt.Errorf("bob still has the roles %v", got))
	}
	if got := d.discord.MemberRoles(d.guilds[0], alice); len(got) != 1 {
		d.check(fmt.Errorf("alice has the roles %v, want the voter role", got))
	}
}

// useCommand runs a command as a user (with /vote's remind:True when remind)
// and returns the reply.
func (d *demo) useCommand(command, user, name string, remind bool) string {
	if d.err != nil {
		return ""
	}
	spec := discordtest.InteractionSpec{Command: command, GuildID: d.guilds[0], UserID: user, Username: name}
	if remind {
		spec.Options = []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: voterperks.RemindOption, Type: discordgo.ApplicationCommandOptionBoolean, Value: true},
		}
	}
	id, _, err := d.discord.Interact(d.ctx, spec)
	if !d.check(err) {
		return ""
	}
	reply, err := d.discord.WaitInteractionReply(d.ctx, id)
	d.check(err)
	return reply.Content
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

// waitPolls waits until the fake Top.gg has answered n more vote history requests.
func (d *demo) waitPolls(n int) {
	polls := func() (n int) {
		for _, r := range d.topgg.Requests() {
			if r.Method == http.MethodGet && r.Path == "/v1/projects/@me/votes" {
				n++
			}
		}
		return n
	}
	target := polls() + n
	d.wait(fmt.Sprintf("%d polls", n), func() bool { return polls() >= target })
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
