package main

import (
	"context"
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

func (r *rewards) enabled() bool { return r.bot.cfg.RewardGuildID != "" }

// onVote is idempotent: adding a role the member has is a no-op on Discord.
func (r *rewards) onVote(ctx context.Context, v voterewards.Vote) error {
	if !r.enabled() {
		r.log.Info("vote received", "user", v.PlatformID, "weight", v.Weight, "source", v.Origin.String())
		return nil
	}
	given, err := r.role(ctx, v, true)
	if !given || err != nil {
		return err
	}
	r.log.Info("vote rewarded: role given", "user", v.PlatformID, "weight", v.Weight, "until", v.ExpiresAt, "source", v.Origin.String())
	return nil
}

// role gives (add) or takes back the voter role; done is false for a user
// not in the reward guild (Discord's 404, which no retry mends).
func (r *rewards) role(ctx context.Context, v voterewards.Vote, add bool) (done bool, err error) {
	guild, role := r.bot.cfg.RewardGuildID, r.bot.cfg.RewardRoleID
	s, err := r.bot.shardFor(guild)
	if err != nil {
		return false, err
	}
	call, reason := s.GuildMemberRoleRemove, "Top.gg vote expired"
	if add {
		call, reason = s.GuildMemberRoleAdd, "voted on Top.gg"
	}
	err = call(guild, v.PlatformID, role, discordgo.WithContext(ctx), discordgo.WithAuditLogReason(reason))
	if restStatus(err) == http.StatusNotFound {
		if add {
			r.log.Info("vote received from a user outside the reward guild; no role given", "user", v.PlatformID)
		}
		return false, nil
	}
	return err == nil, err
}

// onExpire takes the role back and sends the vote reminder (to a user who
// asked for one), unless the user has voted again since: then they keep the
// role and get no reminder, since they cannot vote yet.
func (r *rewards) onExpire(ctx context.Context, v voterewards.Vote) error {
	if st := r.bot.plugin.Active(v.PlatformID); st.Active {
		r.log.Info("vote expired but the user voted again; role kept, no reminder", "user", v.PlatformID)
		return nil
	}
	if !r.enabled() {
		r.log.Info("vote expired", "user", v.PlatformID)
	} else if taken, err := r.role(ctx, v, false); err != nil {
		return err
	} else if taken {
		r.log.Info("vote expired: role taken back", "user", v.PlatformID)
	}
	return r.bot.remind(ctx, v)
}
