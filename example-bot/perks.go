package main

import (
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterperks"
)

// texts are what /vote, /leaderboard and the reminders say: the library's.
var texts = voterperks.Texts{}

// votesOn reports whether votes are polled, which every voter feature needs.
func (c config) votesOn() bool {
	return c.Plugin.VotePollInterval == nil || *c.Plugin.VotePollInterval > 0
}

// perks are the voter features: /vote (with its reminder opt-in) and
// /leaderboard, the reminders, and the voter role with REWARD_GUILD_ID and
// REWARD_ROLE_ID, kept by a newer vote.
func (b *bot) perks() plugin.VoterPerks {
	v := plugin.VoterPerks{BotID: b.botID, Reminders: true, Texts: texts}
	if b.cfg.RewardGuildID != "" {
		v.Role = &voterperks.Role{GuildID: string(b.cfg.RewardGuildID), RoleID: string(b.cfg.RewardRoleID)}
	}
	return v
}
