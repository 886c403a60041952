package voterperks

import (
	"cmp"
	"context"
	"errors"
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
)

// leaderboardSize is how many voters /leaderboard shows.
const leaderboardSize = 10

// interactionTimeout bounds an interaction's answer call; answerWithin bounds
// what the answer waits for before it: Discord drops an interaction not
// answered within 3 seconds.
const (
	interactionTimeout = 2500 * time.Millisecond
	answerWithin       = 2 * time.Second
)

// answerContext bounds the making of an answer (texts and store reads).
func (p *Perks) answerContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), cmp.Or(p.cfg.answerWithin, answerWithin))
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

// Handle answers /vote (saving its remind option) and /leaderboard (this month's
// top 10 voters) ephemerally and in time; it ignores the rest.
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
	ctx, cancel := p.answerContext()
	defer cancel()
	info := p.info(user)
	info.Stats, info.StatsErr = p.cfg.State.Stats(ctx, user)
	if info.StatsErr != nil {
		p.log.Warn("/vote: could not read the user's ledger", "user", user, "error", info.StatsErr)
	}
	msg := p.text(ctx, "Vote", func() string { return p.texts.Vote(info) }, func() string { return defaultVote(info) })
	if p.texts.VoteExtra != nil {
		extra := p.text(ctx, "VoteExtra", func() string { return p.texts.VoteExtra(ctx, info) }, func() string { return "" })
		if extra != "" {
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
	err := p.SetReminder(ctx, user, on)
	switch {
	case errors.Is(err, ErrRemindersOff):
	case err != nil:
		p.log.Warn("could not save a reminder choice", "user", user, "error", err)
	default:
		p.log.Info("reminder choice saved", "user", user, "remind", on)
	}
	return p.text(ctx, "Remind", func() string { return p.texts.Remind(on, err) }, func() string { return defaultRemind(on, err) })
}

// leaderboardAnswer is /leaderboard's answer.
func (p *Perks) leaderboardAnswer() string {
	ctx, cancel := p.answerContext()
	defer cancel()
	month := voterewards.MonthOf(p.cfg.clock.Now())
	top, err := p.cfg.State.Leaderboard(ctx, month, leaderboardSize)
	if err != nil {
		p.log.Warn("/leaderboard: could not read the ledger", "error", err)
	}
	return p.text(ctx, "Leaderboard", func() string { return p.texts.Leaderboard(month, top, err) },
		func() string { return defaultLeaderboard(month, nil, cmp.Or(err, errNoText)) })
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
