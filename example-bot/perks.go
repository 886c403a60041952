package main

import (
	"context"
	"fmt"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterperks"
)

// perks are the voter features: /vote (with its reminder opt-in, the user's
// streak, total and points) and /leaderboard (this month's top 10), the
// reminders, and the voter role with REWARD_GUILD_ID and REWARD_ROLE_ID.
func (b *bot) perks(appID string) plugin.VoterPerks {
	v := plugin.VoterPerks{BotID: appID, Reminders: true}
	if b.points != nil {
		v.Texts.VoteExtra = b.voteExtra
	}
	if b.cfg.RewardGuildID != "" {
		v.Role = &voterperks.Role{GuildID: string(b.cfg.RewardGuildID), RoleID: string(b.cfg.RewardRoleID)}
	}
	return v
}

// voteExtra adds the user's weighted total and points to /vote's answer.
func (b *bot) voteExtra(ctx context.Context, v voterperks.VoteInfo) string {
	points, err := b.points.read(ctx, v.UserID)
	if err != nil {
		b.log.Warn("/vote: could not read the user's points", "user", v.UserID, "error", err)
		return ""
	}
	if v.StatsErr != nil {
		return fmt.Sprintf("Points: %d", points)
	}
	return fmt.Sprintf("Total (weekend votes count twice): %d · points: %d", v.Stats.Total, points)
}
