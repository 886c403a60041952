package voterperks

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/term"
	"github.com/dblkit/go-topgg/voterewards"
)

// Audit log reasons of the role calls.
const (
	reasonGiven = "voted on Top.gg"
	reasonTaken = "Top.gg vote expired"
)

// OnReward is the reward handler: it gives the voter role, if Config.Role is
// set. It is idempotent, honours ctx, and skips a vote that expired before it
// ran. A voter who is not in the guild is logged, not retried; other
// failures are returned, for voterewards to retry.
func (p *Perks) OnReward(ctx context.Context, v voterewards.Vote) error {
	user := v.PlatformID
	if p.cfg.Role == nil || user == "" {
		return nil
	}
	if now := p.cfg.clock.Now(); !v.ExpiresAt.After(now) && !p.votes.Active(user).Active {
		p.log.Info("vote rewarded after it expired: no role given", "user", user, "key", v.Key())
		return nil
	}
	changed, err := p.role(ctx, user, true)
	if err != nil || !changed {
		return err
	}
	p.log.Info("vote rewarded: role given", "user", user, "until", v.ExpiresAt, "source", v.Origin.String())
	return nil
}

// takeRole takes the voter role back from user, who has no newer active vote.
func (p *Perks) takeRole(ctx context.Context, user string) error {
	if p.cfg.Role == nil {
		return nil
	}
	changed, err := p.role(ctx, user, false)
	if err == nil && changed {
		p.log.Info("vote expired: role taken back", "user", user)
	}
	return err
}

// role gives (add) or takes back the voter role. changed is false for a user
// not in the guild or a guild the bot left (a 404 no retry mends).
func (p *Perks) role(ctx context.Context, user string, add bool) (changed bool, err error) {
	s, err := p.session()
	if err != nil {
		return false, err
	}
	guild, role := p.cfg.Role.GuildID, p.cfg.Role.RoleID
	call, reason := s.GuildMemberRoleRemove, reasonTaken
	if add {
		call, reason = s.GuildMemberRoleAdd, reasonGiven
	}
	if err := term.Check(ctx); err != nil { // a fleet leader past its term changes nothing
		return false, err
	}
	err = call(guild, user, role, leaderCall(ctx, discordgo.WithAuditLogReason(reason))...)
	if code, status := restCode(err); status == http.StatusNotFound {
		p.log.Info("voter role: the user or the guild is unknown to Discord; skipped", "user", user, "guild", guild,
			"add", add, slog.Int("code", code))
		return false, nil
	}
	if err != nil {
		verb := "taking back"
		if add {
			verb = "giving"
		}
		return false, fmt.Errorf("voterperks: %s the voter role: %w", verb, err)
	}
	return true, nil
}
