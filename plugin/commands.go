package plugin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterperks"
)

// commandResync is how often the commands are checked again: read from
// Discord (a bot often registers its own in its READY handler) or compared
// with the last published hash.
const commandResync = 15 * time.Minute

// newCommandJob builds the command sync: after the first READY of any
// attached session, it publishes the commands of [WithCommands], else the
// application's read from Discord, and checks them every commandResync.
// Refused definitions are not sent again; a refused token ends the job.
func (p *Plugin) newCommandJob(store commands.HashStore) (*commands.Syncer, error) {
	cfg := commands.Config{Store: store, Logger: p.opts.logger, Ready: p.waitFirstReady, Interval: commandResync, OnResult: p.opts.onSync}
	if p.opts.haveCmds {
		cfg.Commands = p.commandList()
	}
	return commands.New(p.client, cfg)
}

// waitFirstReady returns the first attached session that got its READY, once
// one has, or ctx's error.
func (p *Plugin) waitFirstReady(ctx context.Context) (*discordgo.Session, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case s := <-p.firstReady:
		// Put it back so that a restarted sync (or the next Run) finds it too.
		p.firstReady <- s
		return s, nil
	}
}

// RegisterCommands puts the commands the plugin publishes on Discord as appID's global
// commands. Errors: [topgg.ErrNotConfigured] without [WithCommands], [autopost.ErrNoSessions],
// Discord's (a 429 as a *discordgo.RateLimitError, not waited out).
func (p *Plugin) RegisterCommands(ctx context.Context, appID string) error {
	if !p.opts.haveCmds {
		return fmt.Errorf("plugin: RegisterCommands: %w (WithCommands)", topgg.ErrNotConfigured)
	}
	s := p.restSession()
	if s == nil {
		return fmt.Errorf("plugin: RegisterCommands: %w", autopost.ErrNoSessions)
	}
	if _, err := s.ApplicationCommandBulkOverwrite(appID, "", p.commandList(), discordgo.WithContext(ctx),
		discordgo.WithRetryOnRatelimit(false)); err != nil { // discordgo's wait ignores ctx
		return fmt.Errorf("plugin: registering slash commands on Discord: %w", discord.Scrub(s, err))
	}
	return nil
}

// commandList is WithCommands's list, then the voter perks' commands it lacks.
func (p *Plugin) commandList() []*discordgo.ApplicationCommand {
	list := slices.Clone(p.opts.commands)
	if p.opts.perks == nil {
		return list
	}
	for _, c := range voterperks.Commands(p.opts.perks.Texts) {
		if !slices.ContainsFunc(list, func(d *discordgo.ApplicationCommand) bool { return d.Name == c.Name }) {
			list = append(list, c)
		}
	}
	return list
}
