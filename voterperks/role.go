package voterperks

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/voterewards"
)

// Audit log reasons of the role calls.
const (
	reasonGiven = "voted on Top.gg"
	reasonTaken = "Top.gg vote expired"
)

// OnReward is the reward handler: it gives the voter role (Config.Role),
// idempotently. A voter not in the guild is skipped; other failures are
// returned, for voterewards to retry; a refusal (403) is also warned of once.
func (p *Perks) OnReward(ctx context.Context, v voterewards.Vote) error {
	user := v.PlatformID
	if p.cfg.Role == nil || user == "" {
		return nil
	}
	if now := p.cfg.clock.Now(); !v.ExpiresAt.After(now) && !p.votes.Active(user).Active {
		p.log.Debug("vote rewarded after it expired: no role given", "user", user, "key", v.Key())
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
		p.log.Debug("vote expired: role taken back", "user", user)
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
	call, reason, verb := s.GuildMemberRoleRemove, reasonTaken, "taking back"
	if add {
		call, reason, verb = s.GuildMemberRoleAdd, reasonGiven, "giving"
	}
	if err := clock.CheckTerm(ctx); err != nil { // a fleet leader past its term changes nothing
		return false, err
	}
	if err := p.limited("role"); err != nil {
		return false, fmt.Errorf("voterperks: %s the voter role: %w", verb, err)
	}
	err = call(guild, user, role, leaderCall(ctx, discordgo.WithAuditLogReason(reason))...)
	p.noteLimit("role", err)
	code, status := restCode(err)
	switch status {
	case http.StatusNotFound:
		p.roleNotFound(code, user, add)
		return false, nil
	case http.StatusForbidden:
		p.roleForbidden(code)
	}
	if err != nil {
		return false, fmt.Errorf("voterperks: %s the voter role: %w", verb, discord.Scrub(s, err))
	}
	return true, nil
}

// roleNotFound logs a role call Discord answered 404: a voter not in the
// guild at debug (usual, once per vote), a guild or role the bot cannot see
// once as a warning, since no voter will get the role until it is fixed.
func (p *Perks) roleNotFound(code int, user string, add bool) {
	r := p.cfg.Role
	if code == discordgo.ErrCodeUnknownMember || code == discordgo.ErrCodeUnknownUser {
		p.log.Debug("voter role: the user is not in the guild; skipped", "user", user, "guild", r.GuildID, "add", add)
		return
	}
	if _, done := p.warned.LoadOrStore(code, true); !done {
		p.log.Warn("voter role: Discord knows no guild or role of VoterPerks.Role for this bot (not in the guild, or a wrong id); "+
			"no voter gets the role until the bot is invited or the ids are fixed", "guild", r.GuildID, "role", r.RoleID, slog.Int("code", code))
	}
}

// roleForbidden warns once of a role call Discord answered 403: still
// returned for a retry, it fails every vote until the owner fixes it.
func (p *Perks) roleForbidden(code int) {
	if _, done := p.warned.LoadOrStore([2]int{http.StatusForbidden, code}, true); !done { // apart from a 404's code 0
		r := p.cfg.Role
		p.log.Warn("voter role: Discord refuses this bot the role of VoterPerks.Role; no voter gets it until the bot has "+
			"Manage Roles in the guild and its highest role is above the voter role", "guild", r.GuildID, "role", r.RoleID, slog.Int("code", code))
	}
}
