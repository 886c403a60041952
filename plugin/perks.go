package plugin

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// VoterPerks switches on the voter features of the [voterperks] package.
type VoterPerks struct {
	// BotID is the bot's Discord id, for the vote link. Required.
	BotID string
	// Role, if set, is the voter role, held while the voter's vote is active.
	Role *voterperks.Role
	// Reminders turns on the opt-in reminder messages, kept in [WithState]'s state.
	Reminders bool
	// Texts overrides what the perks say (see [voterperks.Texts]).
	Texts voterperks.Texts
}

// WithVoterPerks turns on the voter features (role, reminders, /vote, /leaderboard,
// [Plugin.Perks]' gate) before the reward and expiry handlers; it needs vote polling.
func WithVoterPerks(v VoterPerks) Option {
	return func(o *options) error {
		o.perks = &v
		return nil
	}
}

// Perks returns the voter features of [WithVoterPerks]; without it, nil and
// a warning naming the option.
func (p *Plugin) Perks() *voterperks.Perks {
	if p.perks == nil {
		p.warnOnce("no perks", "Plugin.Perks() is nil without plugin.WithVoterPerks: no Gate or Handle to use; give the option")
	}
	return p.perks
}

// buildPerks makes the perks and puts their handlers before the bot's own.
func (p *Plugin) buildPerks() error {
	v := p.opts.perks
	if v == nil {
		return nil
	}
	if p.set.votePoll <= 0 {
		return &topgg.ConfigError{Field: "plugin.Config.VotePollInterval", Problem: "is 0 (vote polling off), which WithVoterPerks needs"}
	}
	cfg := voterperks.Config{BotID: v.BotID, State: p.opts.state, Role: v.Role, Reminders: v.Reminders,
		Texts: v.Texts, Logger: p.opts.logger, Session: p.restSession}
	perks, err := voterperks.New(p, cfg)
	if err != nil {
		return err
	}
	p.perks = perks
	p.opts.onReward = chain(perks.OnReward, p.opts.onReward)
	p.opts.onExpire = chain(perks.OnExpire, p.opts.onExpire)
	return nil
}

// chain calls first, then next (if any) when first succeeded; a retry calls
// both again, both idempotent.
func chain(first, next voterewards.Handler) voterewards.Handler {
	if next == nil {
		return first
	}
	return func(ctx context.Context, v voterewards.Vote) error {
		if err := first(ctx, v); err != nil {
			return err
		}
		return next(ctx, v)
	}
}

// restSession returns the first attached session, nil before Attach.
func (p *Plugin) restSession() *discordgo.Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sessions) == 0 {
		return nil
	}
	return p.sessions[0]
}
