package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/voterewards"
)

// rewards gives the voter role on a vote and takes it back when the vote expires,
// when REWARD_GUILD_ID and REWARD_ROLE_ID are set; otherwise it only logs.
//
// The role calls carry the handler's context: the sessions' transport (package
// shards) waits out a 429 under it and bounds the answer's body, so the
// plugin's cancellation at shutdown ends a call Discord rate-limits at once.
type rewards struct {
	bot *bot
	log *slog.Logger
}

func (r *rewards) enabled() bool {
	return r.bot.cfg.RewardGuildID != "" && r.bot.cfg.RewardRoleID != ""
}

// onVote is idempotent: adding a role the member has is a no-op on Discord.
func (r *rewards) onVote(ctx context.Context, v voterewards.Vote) error {
	if !r.enabled() {
		r.log.Info("vote received", "user", v.PlatformID, "weight", v.Weight, "source", v.Origin.String())
		return nil
	}
	guild, role := r.bot.cfg.RewardGuildID, r.bot.cfg.RewardRoleID
	s, err := r.bot.shardFor(guild)
	if err != nil {
		return err
	}
	err = s.GuildMemberRoleAdd(guild, v.PlatformID, role, discordgo.WithContext(ctx), discordgo.WithAuditLogReason("voted on Top.gg"))
	if notMember(err) {
		r.log.Info("vote received from a user outside the reward guild; no role given", "user", v.PlatformID)
		return nil
	}
	if err != nil {
		return err
	}
	r.log.Info("vote rewarded: role given", "user", v.PlatformID, "weight", v.Weight, "until", v.ExpiresAt, "source", v.Origin.String())
	return nil
}

// onExpire takes the role back and sends the vote reminder (to a user who
// asked for one), unless the user has voted again since: then they keep the
// role and get no reminder, since they cannot vote yet.
func (r *rewards) onExpire(ctx context.Context, v voterewards.Vote) error {
	if st := r.bot.plugin.Active(v.PlatformID); st.Active {
		r.log.Info("vote expired but the user voted again; role kept, no reminder", "user", v.PlatformID)
		return nil
	}
	if err := r.takeRole(ctx, v); err != nil {
		return err
	}
	return r.bot.remind(ctx, v)
}

// takeRole takes the voter role back from the voter of an expired vote.
func (r *rewards) takeRole(ctx context.Context, v voterewards.Vote) error {
	if !r.enabled() {
		r.log.Info("vote expired", "user", v.PlatformID)
		return nil
	}
	guild, role := r.bot.cfg.RewardGuildID, r.bot.cfg.RewardRoleID
	s, err := r.bot.shardFor(guild)
	if err != nil {
		return err
	}
	err = s.GuildMemberRoleRemove(guild, v.PlatformID, role, discordgo.WithContext(ctx), discordgo.WithAuditLogReason("Top.gg vote expired"))
	if notMember(err) {
		return nil
	}
	if err != nil {
		return err
	}
	r.log.Info("vote expired: role taken back", "user", v.PlatformID)
	return nil
}

// notMember reports Discord's answer for a user who is not in the guild, which no
// retry mends.
func notMember(err error) bool {
	var re *discordgo.RESTError
	return errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusNotFound
}
