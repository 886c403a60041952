package voterperks

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/voterewards"
)

// The ready commands' names, and /vote's option.
const (
	VoteCommand        = "vote"
	LeaderboardCommand = "leaderboard"
	// RemindOption is /vote's boolean option: True turns reminders on, False off.
	RemindOption = "remind"
	// LeaderboardSize is how many voters /leaderboard shows.
	LeaderboardSize = 10
)

// interactionTimeout bounds what an interaction's answer waits for: Discord
// drops an interaction not answered within 3 seconds.
const interactionTimeout = 2500 * time.Millisecond

func (p *Perks) interactionContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), interactionTimeout)
}

// Commands returns /vote (its remind option there even without reminders) and
// /leaderboard, with t's descriptions, for Discord and plugin.WithCommands;
// they pass commands.Validate.
func Commands(t Texts) []*discordgo.ApplicationCommand {
	t = t.withDefaults()
	return []*discordgo.ApplicationCommand{
		{
			Name: VoteCommand, Description: t.VoteDescription,
			Options: []*discordgo.ApplicationCommandOption{{
				Type: discordgo.ApplicationCommandOptionBoolean, Name: RemindOption, Description: t.RemindDescription,
			}},
		},
		{Name: LeaderboardCommand, Description: t.LeaderboardDescription},
	}
}

// Commands returns [Commands] with the perks' own texts.
func (p *Perks) Commands() []*discordgo.ApplicationCommand { return Commands(p.cfg.Texts) }

// Handle answers /vote (saving its remind option) and /leaderboard (this month's
// top [LeaderboardSize] voters) ephemerally and in time; it ignores the rest.
func (p *Perks) Handle(s *discordgo.Session, i *discordgo.InteractionCreate) {
	if i.Type != discordgo.InteractionApplicationCommand {
		return
	}
	user := interactionUser(i)
	if user == "" {
		return
	}
	switch data := i.ApplicationCommandData(); data.Name {
	case VoteCommand:
		p.respond(s, i, p.voteAnswer(user, data), VoteCommand)
	case LeaderboardCommand:
		p.respond(s, i, p.leaderboardAnswer(), LeaderboardCommand)
	}
}

// voteAnswer is /vote's answer to user.
func (p *Perks) voteAnswer(user string, data discordgo.ApplicationCommandInteractionData) string {
	ctx, cancel := p.interactionContext()
	defer cancel()
	info := VoteInfo{UserID: user, VoteURL: p.VoteURL(), Status: p.votes.Active(user), Now: p.cfg.clock.Now()}
	info.Stats, info.StatsErr = p.votes.Stats(ctx, user)
	if info.StatsErr != nil {
		p.log.Warn("/vote: could not read the user's ledger", "user", user, "error", info.StatsErr)
	}
	msg := p.texts.Vote(info)
	if p.texts.VoteExtra != nil {
		if extra := p.texts.VoteExtra(ctx, info); extra != "" {
			msg += "\n" + extra
		}
	}
	if on, given := remindOptionValue(data); given {
		msg += "\n" + p.remindAnswer(ctx, user, on)
	}
	return msg
}

// remindAnswer saves a /vote remind choice and says what happened.
func (p *Perks) remindAnswer(ctx context.Context, user string, on bool) string {
	if p.cfg.Reminders == nil {
		return p.texts.RemindersOff
	}
	if err := p.SetReminder(ctx, user, on); err != nil {
		p.log.Warn("could not save a reminder choice", "user", user, "error", err)
		return p.texts.RemindFailed
	}
	p.log.Info("reminder choice saved", "user", user, "remind", on)
	if on {
		return p.texts.RemindOn
	}
	return p.texts.RemindOff
}

// leaderboardAnswer is /leaderboard's answer.
func (p *Perks) leaderboardAnswer() string {
	ctx, cancel := p.interactionContext()
	defer cancel()
	month := voterewards.MonthOf(p.cfg.clock.Now())
	board, err := p.votes.Leaderboard(ctx, month, LeaderboardSize)
	if err != nil {
		p.log.Warn("/leaderboard: could not read the ledger", "error", err)
	}
	return p.texts.Leaderboard(LeaderboardInfo{Month: month, Standings: board, Err: err})
}

// remindOptionValue returns /vote's remind option, if the user gave it.
func remindOptionValue(data discordgo.ApplicationCommandInteractionData) (on, given bool) {
	for _, o := range data.Options {
		if o != nil && o.Name == RemindOption && o.Type == discordgo.ApplicationCommandOptionBoolean {
			b, ok := o.Value.(bool)
			return b, ok
		}
	}
	return false, false
}
