package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/bwmarrin/discordgo"
)

// errNotReady: a session without READY, so no application ID.
var errNotReady = errors.New("commands: discordgo session is not ready (no READY received)")

// errDiscordFetch marks a failure to read the commands from Discord.
var errDiscordFetch = errors.New("commands: fetching the application's commands from Discord")

// syncFromDiscord is Sync of the application's global commands as Discord has
// them; it asks Discord nothing for a project that is not a Discord bot.
func (s *Syncer) syncFromDiscord(ctx context.Context, session *discordgo.Session, refused *refusal) (Result, error) {
	if session == nil {
		return Result{}, errNilSession
	}
	appID := applicationID(session)
	if appID == "" {
		return Result{}, errNotReady
	}
	if err := s.lock(ctx); err != nil {
		return Result{}, err
	}
	defer s.unlock()
	p, err := s.readProject(ctx)
	if err != nil {
		return Result{}, err
	}
	if !p.IsDiscordBot() {
		return s.skipNotBot(p, 0), nil
	}
	cmds, err := session.ApplicationCommands(appID, "", discordgo.WithContext(ctx))
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", errDiscordFetch, err)
	}
	defs, err := Normalize(cmds)
	if err != nil {
		return Result{Commands: len(cmds)}, err
	}
	return s.publish(ctx, p, defs, refused)
}

// applicationID reads the application ID from the session's State, or "".
func applicationID(session *discordgo.Session) string {
	if session == nil || session.State == nil {
		return ""
	}
	st := session.State
	st.RLock()
	defer st.RUnlock()
	if st.Application != nil && st.Application.ID != "" {
		return st.Application.ID
	}
	if st.User != nil {
		return st.User.ID
	}
	return ""
}
