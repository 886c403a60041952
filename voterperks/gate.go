package voterperks

import (
	"context"
	"log/slog"
	"slices"

	"github.com/bwmarrin/discordgo"
	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/internal/discord"
)

// Gate returns the interaction handler h for voters only: others get an
// ephemeral answer with the vote link (Texts.Gate), from the vote cache in any
// process; a panic in h is logged and answered as an error. With commands
// named it handles only those commands; with none, every interaction.
func (p *Perks) Gate(h func(*discordgo.Session, *discordgo.InteractionCreate), commands ...string) func(*discordgo.Session, *discordgo.InteractionCreate) {
	for _, c := range commands {
		p.gated.Store(c, true)
	}
	return func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		if len(commands) > 0 && !isCommand(i, commands) {
			return
		}
		user := interactionUser(i)
		if user == "" {
			return
		}
		info := p.info(user)
		if info.Status.Active {
			p.serve(s, i, h)
			return
		}
		ctx, cancel := p.answerContext()
		defer cancel()
		p.respond(s, i, p.text(ctx, "Gate", func() string { return p.texts.Gate(info) }, func() string { return defaultGate(info) }), "gate")
	}
}

// serve calls h, containing a panic as a text function's is: logged with its
// stack, the user told of an error (refused if h answered before it panicked).
func (p *Perks) serve(s *discordgo.Session, i *discordgo.InteractionCreate, h func(*discordgo.Session, *discordgo.InteractionCreate)) {
	rec := panics.Try(func() { h(s, i) })
	if rec == nil {
		return
	}
	p.log.Error("a gated handler panicked; answered with an error", slog.String("user", interactionUser(i)),
		slog.Any("panic", rec.Value), slog.String("stack", string(rec.Stack)))
	p.respond(s, i, "Something went wrong with this command; please try again later.", "gate")
}

// GatedCommands returns the command names given to [Perks.Gate] so far,
// sorted, for a check against the bot's commands.
func (p *Perks) GatedCommands() []string {
	var names []string
	p.gated.Range(func(k, _ any) bool { names = append(names, k.(string)); return true })
	slices.Sort(names)
	return names
}

// info returns what the texts say of user: the vote link and the cache's answer.
func (p *Perks) info(user string) VoteInfo {
	return VoteInfo{UserID: user, VoteURL: p.voteURL(), Status: p.votes.Active(user), Now: p.cfg.clock.Now()}
}

// isCommand reports whether i is an application command named one of names.
func isCommand(i *discordgo.InteractionCreate, names []string) bool {
	return i.Type == discordgo.InteractionApplicationCommand && slices.Contains(names, i.ApplicationCommandData().Name)
}

// interactionUser returns the id of the user who made i ("" if none).
func interactionUser(i *discordgo.InteractionCreate) string {
	switch {
	case i.Member != nil && i.Member.User != nil:
		return i.Member.User.ID
	case i.User != nil:
		return i.User.ID
	}
	return ""
}

// respond answers i ephemerally with msg, under interactionTimeout.
func (p *Perks) respond(s *discordgo.Session, i *discordgo.InteractionCreate, msg, what string) {
	ctx, cancel := context.WithTimeout(context.Background(), interactionTimeout)
	defer cancel()
	err := s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: msg, Flags: discordgo.MessageFlagsEphemeral},
	}, discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false)) // an answer after retry_after comes too late
	if err != nil {
		p.log.Warn("could not answer an interaction", "what", what, "user", interactionUser(i), "error", discord.Scrub(s, err))
	}
}
