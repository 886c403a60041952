package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterperks"
)

const demoWebhookSecret = "whs_demo_secret" // signs the demo's webhooks

// demo is the offline demo: the real bot against in-process fakes, a script
// of events, and a narrator that says what to look for. Its first failure
// sticks (err): every later line is skipped, and runDemo returns it.
type demo struct {
	ctx     context.Context // done when the demo times out or the bot stops
	out     io.Writer
	discord *discordtest.Server
	topgg   *topggtest.Server
	err     error
}

// demoGuild is the n-th server of a shard (of 2); the first is the reward role's.
func demoGuild(n, shard int) string { return discordtest.GuildIDForShard(n, shard, 2) }

// runDemo runs the bot as main does, against a 2-shard fake Discord and a fake
// Top.gg, plays the script and waits for each effect.
func runDemo(ctx context.Context, out io.Writer) error {
	ctx, botStopped := context.WithCancelCause(ctx)
	defer botStopped(nil)
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // each step waits for what it shows, not a fixed time
	defer cancel()
	hook, err := net.Listen("tcp", "127.0.0.1:0") // a free port for the webhook receiver, held until the bot starts
	if err != nil {
		return err
	}
	defer hook.Close()
	url := "http://" + hook.Addr().String() + "/topgg/webhook"
	dsrv, err := discordtest.NewServer(discordtest.WithShardCount(2), discordtest.WithGuilds(demoGuild(1, 0), demoGuild(2, 0), demoGuild(3, 1)))
	if err != nil {
		return err
	}
	defer dsrv.Close()
	project := topggtest.DiscordBot()
	project.PlatformID = dsrv.BotUserID()
	tsrv, err := topggtest.NewServer(topggtest.WithProject(project), topggtest.WithWebhook(url, demoWebhookSecret))
	if err != nil {
		return err
	}
	defer tsrv.Close()
	dir, err := os.MkdirTemp("", "topgg-demo-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := envconfig.MapLookuper(map[string]string{
		"DISCORD_TOKEN": dsrv.Token(), "TOPGG_TOKEN": tsrv.Token(), "DISCORD_API_URL": dsrv.APIBase(), "TOPGG_API_URL": tsrv.URL,
		"SHARD_COUNT": "2", "TOPGG_STATE_DIR": dir, "TOPGG_AUTOPOST_INTERVAL": "1s", "TOPGG_VOTE_POLL_INTERVAL": "1s",
		"TOPGG_WEBHOOK_ADDR": hook.Addr().String(), "TOPGG_WEBHOOK_SECRET": demoWebhookSecret,
		"REWARD_GUILD_ID": demoGuild(1, 0), "REWARD_ROLE_ID": "900000000000000777",
	})
	d := &demo{ctx: ctx, out: out, discord: dsrv, topgg: tsrv}
	d.say("A fake Top.gg and a fake Discord run in this process (nothing leaves the machine). The bot starts\n" +
		"    with 2 shards and 3 servers, posting and polling votes every second (a real bot posts every 30 minutes and\n" +
		"    polls every minute); its webhook receiver listens on 127.0.0.1. Lines without >>> are the bot's own log.")
	botCtx, stopBot := context.WithCancel(ctx)
	exit := make(chan int, 1)
	_ = hook.Close() // now, not earlier: the fakes above would have been free to take the port
	go func() { exit <- run(botCtx, nil, env, out, out); botStopped(errors.New("the bot stopped")) }()
	d.script(url)
	d.say("Stopping the bot, as on SIGTERM: the jobs stop, the vote state is saved, the shards close.")
	stopBot()
	if code := <-exit; code != exitOK {
		d.check(fmt.Errorf("the bot exited with status %d", code))
	}
	d.say("Done. Top.gg received %d metrics posts; Discord saw %d role changes. Run `go test -race ./...` next.",
		len(tsrv.Metrics()), len(dsrv.RoleChanges()))
	return d.err
}

// script: the first post and the commands; servers join, leave and go down.
// Two votes come by webhook, rewarded at once, and the poll rewards nothing
// again; alice uses /vote and /leaderboard, bob asks for a reminder and gets it.
func (d *demo) script(url string) {
	d.wait("the first post", func() bool { return d.last("server_count") == 3 })
	d.say("Both shards are ready, and Top.gg shows %d servers and %d shards.", d.last("server_count"), d.last("shard_count"))
	d.wait("command sync", func() bool { _, ok := d.topgg.Commands(); return ok })
	cmds, _ := d.topgg.Commands()
	d.say("The bot registered its slash commands on Discord and published the same to Top.gg: %s", cmds)
	d.say("Two servers add the bot.")
	d.change(d.discord.Join, demoGuild(4, 0), 4)
	d.change(d.discord.Join, demoGuild(5, 1), 5)
	d.say("A server removes the bot: the count goes down.")
	d.change(d.discord.Remove, demoGuild(2, 0), 4)
	d.say("A server has a Discord outage: it still counts (a cache-based count would drop it).")
	d.check(d.discord.Outage(d.ctx, demoGuild(3, 1)))
	// Nothing new is posted (an unchanged count is not posted again); give the bot two intervals to prove it.
	until := time.Now().Add(2500 * time.Millisecond)
	d.wait("two intervals", func() bool { return time.Now().After(until) })
	if got := d.last("server_count"); got != 4 {
		d.check(fmt.Errorf("after the outage Top.gg shows %d servers, want 4", got))
	}
	d.say("Top.gg shows %d servers.", d.last("server_count"))

	alice, bob := "300000000000000001", "300000000000000002"
	d.say("The bot's webhook receiver listens at %s; the project's webhook settings on Top.gg have that URL.", url)
	d.waitPolls(1) // start right after a poll, so that the webhook is the first to tell
	now := time.Now()
	d.say("Two users vote on Top.gg: alice, and bob on a weekend (weight 2). A vote lasts 12 hours on Top.gg;\n" +
		"    for the demo bob's lasts 5 seconds. Top.gg sends each vote to the bot's webhook receiver, signed,\n" +
		"    and the bot gives each the voter role at once.")
	d.topgg.AddVote(
		topggtest.Vote{UserID: "800000000000000001", PlatformID: alice, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		topggtest.Vote{UserID: "800000000000000002", PlatformID: bob, Weight: 2, CreatedAt: now, ExpiresAt: now.Add(5 * time.Second)},
	)
	roles := func() int { return len(d.discord.RoleChanges()) } // 2 grants, then bob's role taken back
	d.wait("the roles", func() bool { return roles() == 2 })
	var answers []string
	for _, del := range d.topgg.Deliveries() {
		if n := len(del.Attempts); n > 0 {
			answers = append(answers, fmt.Sprint(del.Attempts[n-1].Status))
		}
	}
	d.say("Both roles were given %d ms after the votes (source=webhook in the log above); Top.gg's deliveries were answered %s.",
		time.Since(now).Milliseconds(), strings.Join(answers, ", "))
	d.waitPolls(2)
	d.say("The bot polled the vote history since: it holds the same two votes (without the webhook's id, and with\n"+
		"    another timestamp format). The bot knows them: still %d role grants.", roles())

	d.say("alice uses /vote; the bot answers from its vote cache, without asking Top.gg.")
	d.say("The bot replied (only alice sees it): %q", d.use("vote", alice))
	d.say("alice uses /leaderboard, this month's top voters from the bot's vote ledger. The bot replied: %q", d.use("leaderboard", alice))
	d.say("bob uses /vote remind:True, to get a direct message when he can vote again.")
	d.say("The bot replied: %q", d.use("vote", bob,
		&discordgo.ApplicationCommandInteractionDataOption{Name: voterperks.RemindOption, Type: discordgo.ApplicationCommandOptionBoolean, Value: true}))
	d.say("bob's vote expires: the bot takes his role back. alice keeps hers.")
	d.wait("bob's role to be taken back", func() bool { return roles() == 3 })
	if dms, err := d.discord.WaitDirectMessages(d.ctx, bob, 1); d.check(err) {
		d.say("bob got a direct message: %q", dms[0].Content)
	}
	if b, a := d.discord.MemberRoles(demoGuild(1, 0), bob), d.discord.MemberRoles(demoGuild(1, 0), alice); len(b) != 0 || len(a) != 1 {
		d.check(fmt.Errorf("bob has the roles %v (want none), alice %v (want the voter role)", b, a))
	}
}

// say narrates, unless a step failed.
func (d *demo) say(format string, args ...any) {
	if d.err == nil {
		fmt.Fprintf(d.out, "\n>>> "+format+"\n", args...)
	}
}

// check keeps the demo's first failure; it reports whether the demo goes on.
func (d *demo) check(err error) bool {
	d.err = cmp.Or(d.err, err)
	return d.err == nil
}

// wait polls cond until it holds; the demo fails if the bot stops or time runs out first.
func (d *demo) wait(what string, cond func() bool) {
	for d.err == nil && !cond() {
		select {
		case <-d.ctx.Done():
			d.check(fmt.Errorf("waiting for %s: %w", what, context.Cause(d.ctx)))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// change acts on a server and waits for Top.gg to get a new post of servers.
func (d *demo) change(act func(context.Context, string) error, guild string, servers int) {
	before := len(d.topgg.Metrics())
	d.check(act(d.ctx, guild))
	d.wait(fmt.Sprint(servers, " servers"), func() bool { return d.last("server_count") == servers && len(d.topgg.Metrics()) > before })
}

// last is the metric's value in Top.gg's last post (0 before the first).
func (d *demo) last(metric string) int {
	if m := d.topgg.Metrics(); len(m) > 0 {
		return m[len(m)-1].Metrics[metric]
	}
	return 0
}

// use runs a command as user, with options, and returns the reply.
func (d *demo) use(command, user string, options ...*discordgo.ApplicationCommandInteractionDataOption) string {
	id, _, err := d.discord.Interact(d.ctx, discordtest.InteractionSpec{Command: command, GuildID: demoGuild(1, 0), UserID: user, Options: options})
	if !d.check(err) {
		return ""
	}
	reply, err := d.discord.WaitInteractionReply(d.ctx, id)
	d.check(err)
	return reply.Content
}

// waitPolls waits until the fake Top.gg has answered n more vote history requests.
func (d *demo) waitPolls(n int) {
	polls := func() int {
		return len(slices.DeleteFunc(d.topgg.Requests(), func(r topggtest.Request) bool { return r.Path != "/v1/projects/@me/votes" }))
	}
	target := polls() + n
	d.wait(fmt.Sprint(n, " polls"), func() bool { return polls() >= target })
}
