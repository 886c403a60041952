package plugin

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// Bounds of the wiring checks.
const (
	wiringCallTimeout = 10 * time.Second // the one read of Discord's commands
	maxNotFoundPaths  = 8                // 404 paths logged: scanners try many
	unbroughtVotes    = 3                // new votes only the poll found before the webhook warning
)

// wiring is what the plugin learns of its wiring while it runs, and the
// warnings it gave, each once for the plugin's life.
type wiring struct {
	botID     atomic.Pointer[string] // the user id of the first READY
	project   atomic.Pointer[string] // the token's Top.gg project id, read at READY with webhooks on
	mounted   atomic.Bool            // WebhookHandler was called
	delivered atomic.Bool            // a webhook brought a vote first
	unbrought atomic.Int64           // new votes the poll found first, while none came by webhook
	notFound  atomic.Int64           // 404 paths logged
	warned    sync.Map               // the keys of the warnings given
}

// warnOnce logs msg as a warning the first time key is given, and says if it did.
func (p *Plugin) warnOnce(key, msg string, args ...any) bool {
	_, done := p.wire.warned.LoadOrStore(key, true)
	if !done {
		p.log.Warn(msg, args...)
	}
	return !done
}

// checkAtReady checks, once the first session got READY, what the plugin
// then knows: the bot's id and the commands Discord has.
func (p *Plugin) checkAtReady(ctx context.Context) {
	s, err := p.waitFirstReady(ctx)
	if err != nil || s.State == nil || s.State.User == nil {
		return
	}
	bot := s.State.User.ID
	p.wire.botID.Store(&bot)
	if v := p.opts.perks; v != nil && v.BotID != bot {
		p.warnOnce("perks bot", "VoterPerks.BotID is not this bot's id: the vote link leads to another bot's page",
			"bot_id", v.BotID, "ready_user", bot)
	}
	ctx, cancel := context.WithTimeout(ctx, wiringCallTimeout)
	defer cancel()
	if p.hook != nil { // to tell a token of another project by the webhook's votes
		if pr, err := p.client.Project(ctx); err == nil {
			p.wire.project.Store(&pr.ID)
		} else if !errors.Is(err, context.Canceled) { // Run stopping; a timeout is news
			p.log.Warn("could not read the token's project from Top.gg to check the webhook votes are this bot's; unchecked until the next start",
				"error", err)
		}
	}
	if p.perks == nil && !p.opts.haveCmds {
		return
	}
	// No wait on a 429: discordgo's ignores ctx, and would hold Run's return.
	cmds, err := s.ApplicationCommands(applicationID(s), "", discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false))
	if err != nil {
		if !errors.Is(err, context.Canceled) { // Run stopping; a timeout is news
			p.log.Warn("could not read the commands on Discord to check them; unchecked until the next start", "error", discord.Scrub(s, err))
		}
		return
	}
	p.checkCommands(cmds)
}

// checkCommands warns of commands the plugin publishes or gates that Discord
// does not have: listed on Top.gg, dead in Discord.
func (p *Plugin) checkCommands(onDiscord []*discordgo.ApplicationCommand) {
	var have []string
	for _, c := range onDiscord {
		have = append(have, c.Name)
	}
	for _, c := range p.commandList() {
		if !slices.Contains(have, c.Name) {
			p.warnOnce("unregistered "+c.Name, "a command the plugin publishes or answers is not registered on Discord: "+
				"call Plugin.RegisterCommands (with WithCommands), or register it yourself", "command", c.Name)
		}
	}
	if p.perks == nil {
		return
	}
	for _, name := range p.perks.GatedCommands() {
		if name == voterperks.VoteCommand || name == voterperks.LeaderboardCommand {
			p.warnOnce("gated "+name, "Gate names a command the voter perks answer themselves: "+
				"Discord takes one answer and refuses the other", "command", name)
		} else if !slices.Contains(have, name) {
			p.warnOnce("gated "+name, "Gate names a command the bot does not have on Discord: its handler never runs"+
				didYouMean(name, have), "command", name)
		}
	}
}

// applicationID is the application of a session that got READY.
func applicationID(s *discordgo.Session) string {
	s.State.RLock()
	defer s.State.RUnlock()
	if a := s.State.Application; a != nil && a.ID != "" {
		return a.ID
	}
	return s.State.User.ID
}

// noPerksAnswer warns when /vote or /leaderboard is used while
// WithVoterPerks is off: the plugin does not answer it.
func (p *Plugin) noPerksAnswer(_ *discordgo.Session, i *discordgo.InteractionCreate) {
	if i.Type != discordgo.InteractionApplicationCommand {
		return
	}
	if name := i.ApplicationCommandData().Name; name == voterperks.VoteCommand || name == voterperks.LeaderboardCommand {
		p.warnOnce("no perks "+name, "a user used a voter perks command, but WithVoterPerks is off: unless the bot "+
			"answers it itself, give plugin.WithVoterPerks or remove the command from Discord", "command", name)
	}
}

// warnUnmounted warns when webhook secrets are set but no receiver serves
// them: no WebhookAddr, and WebhookHandler never taken.
func (p *Plugin) warnUnmounted() {
	if p.hook != nil && p.set.WebhookAddr == "" && !p.wire.mounted.Load() {
		p.warnOnce("unmounted", "webhook secrets are set but no receiver serves them: set Config.WebhookAddr "+
			"(TOPGG_WEBHOOK_ADDR), or mount Plugin.WebhookHandler() on your own server")
	}
}

// notFound answers 404 on the plugin's webhook server, and logs each of the
// first maxNotFoundPaths paths once: a wrong webhook URL at Top.gg.
func (p *Plugin) notFound(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path[:min(len(r.URL.Path), 100)]
	if p.wire.notFound.Load() < maxNotFoundPaths && p.warnOnce("404 "+path, "webhook server: a request for another path "+
		"got 404; if it came from Top.gg, set the project's webhook URL to the receiver's path", "path", path, "receiver", p.set.WebhookPath) {
		p.wire.notFound.Add(1)
	}
	http.NotFound(w, r)
}

// checkWebhookVote warns once when a webhook vote is for another bot than
// the one of READY (the webhook at Top.gg is another listing's), or for this
// bot's project while the token is another project's.
func (p *Plugin) checkWebhookVote(v webhook.Vote) {
	bot, project := p.wire.botID.Load(), p.wire.project.Load()
	switch {
	case bot == nil || v.Guild || v.ProjectPlatformID == "":
	case v.ProjectPlatformID != *bot:
		p.warnOnce("webhook project", "webhook votes are for another bot: the webhook and its secret at Top.gg "+
			"belong to another project's listing", "votes_for", v.ProjectPlatformID, "bot", *bot)
	case project != nil && v.ProjectID != "" && v.ProjectID != *project:
		p.warnOnce("token project", "the Top.gg token is another project's than this bot's: its counts, commands and "+
			"vote history are that listing's; use the token of the project the webhook votes are for",
			"token_project", *project, "bot_project", v.ProjectID, "bot", *bot)
	}
}

// watchOrigin wraps the reward handler: while webhooks are on, it warns once
// when unbroughtVotes votes made since New came by the poll only, none by
// webhook: Top.gg's deliveries do not reach the receiver.
func (p *Plugin) watchOrigin(h voterewards.Handler) voterewards.Handler {
	since := p.opts.clock.Now()
	return func(ctx context.Context, v voterewards.Vote) error {
		switch {
		case p.hook == nil || p.wire.delivered.Load():
		case v.Origin != voterewards.OriginHistory:
			p.wire.delivered.Store(true)
		case v.CreatedAt.After(since):
			if _, seen := p.wire.warned.LoadOrStore("unbrought "+v.Key(), true); !seen && p.wire.unbrought.Add(1) == unbroughtVotes {
				p.log.Warn("the vote poll finds new votes that no webhook delivery brought: Top.gg's webhook does not "+
					"reach the receiver; check the project's webhook URL and secret at Top.gg", "votes", unbroughtVotes,
					"path", p.set.WebhookPath)
			}
		}
		return h(ctx, v)
	}
}
