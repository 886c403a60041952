package main

import (
	"context"
	"fmt"
	"time"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterperks"
)

// votesOn reports whether votes are polled, which every voter feature needs.
func (c config) votesOn() bool {
	return c.Plugin.VotePollInterval == nil || *c.Plugin.VotePollInterval > 0
}

// perks are the voter features: /vote (with its reminder opt-in, the user's
// streak, total and points) and /leaderboard (this month's top 10), the
// reminders, and the voter role with REWARD_GUILD_ID and REWARD_ROLE_ID.
func (b *bot) perks() plugin.VoterPerks {
	v := plugin.VoterPerks{BotID: b.botID, Reminders: true, Texts: voterperks.Texts{Vote: b.voteText}}
	if b.points != nil {
		v.ReminderStore = b.points.reminders // PostgreSQL's with DATABASE_URL, else nil: the backend's
	}
	if b.cfg.RewardGuildID != "" {
		v.Role = &voterperks.Role{GuildID: string(b.cfg.RewardGuildID), RoleID: string(b.cfg.RewardRoleID)}
	}
	return v
}

// voteText is the library's /vote answer, with the user's weighted total and
// points. The answer must come within Discord's 3 s, hence the short bound.
func (b *bot) voteText(v voterperks.VoteInfo) string {
	msg := voterperks.DefaultTexts().Vote(v)
	if b.points == nil {
		return msg
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	points, err := b.points.read(ctx, v.UserID)
	if err != nil {
		b.log.Warn("/vote: could not read the user's points", "user", v.UserID, "error", err)
		return msg
	}
	if v.StatsErr != nil {
		return msg + fmt.Sprintf("\nPoints: %d", points)
	}
	return msg + fmt.Sprintf("\nTotal (weekend votes count twice): %d · points: %d", v.Stats.Total, points)
}
