package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/bwmarrin/discordgo"
)

// serveCommands serves the commands of a scope ("" global, else {guild}):
// GET lists them; PUT replaces them (bulk overwrite); POST upserts one by
// type and name, 201 when new. A command keeps its ID when one of the same
// type and name existed, as on Discord. The fake checks no rule of Discord's
// on the definitions: package commands checks them before anything is sent.
// Another application or a guild the bot is not in is 403 Missing Access.
func (s *Server) serveCommands(w http.ResponseWriter, r *http.Request) {
	scope := r.PathValue("guild")
	s.mu.Lock()
	_, known := s.guilds[scope]
	old := s.commands[scope] // never changed, only replaced: encoded without the lock
	s.mu.Unlock()
	var cmds []*discordgo.ApplicationCommand
	body := any(&cmds)
	if r.Method == http.MethodPost {
		cmds = make([]*discordgo.ApplicationCommand, 1)
		body = &cmds[0]
	}
	switch {
	case r.PathValue("app") != s.cfg.appID || (scope != "" && !known):
		writeError(w, http.StatusForbidden, 50001, "Missing Access")
		return
	case r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, append([]*discordgo.ApplicationCommand{}, old...))
		return
	case !decodeJSON(w, r.Body, body):
		return
	case slices.Contains(cmds, nil):
		invalidForm(w, "", "BASE_TYPE_REQUIRED", "This field is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.notifyLocked()
	old = s.commands[scope]
	if r.Method == http.MethodPut {
		list := make([]*discordgo.ApplicationCommand, len(cmds))
		for i, cmd := range cmds {
			list[i] = s.storeCommandLocked(scope, old, cmd)
		}
		s.commands[scope] = list
		writeJSON(w, http.StatusOK, list)
		return
	}
	cmd := s.storeCommandLocked(scope, old, cmds[0])
	list, status := slices.Clone(old), http.StatusCreated
	if i := slices.IndexFunc(list, func(c *discordgo.ApplicationCommand) bool { return c.ID == cmd.ID }); i >= 0 {
		list[i], status = cmd, http.StatusOK
	} else {
		list = append(list, cmd)
	}
	s.commands[scope] = list
	writeJSON(w, status, cmd)
}

// storeCommandLocked returns cmd with what Discord adds to a command (ID,
// kept when old holds one of the same type and name; application, guild,
// version, default type). The caller holds s.mu.
func (s *Server) storeCommandLocked(scope string, old []*discordgo.ApplicationCommand, cmd *discordgo.ApplicationCommand) *discordgo.ApplicationCommand {
	c := *cmd
	if c.Type == 0 {
		c.Type = discordgo.ChatApplicationCommand
	}
	c.ID = ""
	for _, o := range old {
		if o.Type == c.Type && o.Name == c.Name {
			c.ID = o.ID
		}
	}
	if c.ID == "" {
		c.ID = s.nextIDLocked()
	}
	c.ApplicationID, c.GuildID, c.Version = s.cfg.appID, scope, s.nextIDLocked()
	if c.Options == nil {
		c.Options = []*discordgo.ApplicationCommandOption{}
	}
	return &c
}

// Commands returns the global application commands, as GET
// /applications/{app}/commands would.
func (s *Server) Commands() []*discordgo.ApplicationCommand { return s.scopeCommands("") }

// scopeCommands returns a deep copy of the commands of a scope.
func (s *Server) scopeCommands(scope string) []*discordgo.ApplicationCommand {
	s.mu.Lock()
	raw, _ := json.Marshal(s.commands[scope]) // only what json.Unmarshal made
	s.mu.Unlock()
	out := []*discordgo.ApplicationCommand{}
	_ = json.Unmarshal(raw, &out)
	return out
}

// lookupCommandLocked finds a command by name for an interaction: the
// guild's commands first, then the global ones; scope is "" for a global
// command, else the guild ID. The caller holds s.mu.
func (s *Server) lookupCommandLocked(guildID, name string) (cmd *discordgo.ApplicationCommand, scope string, ok bool) {
	for _, scope := range []string{guildID, ""} {
		for _, c := range s.commands[scope] {
			if c.Name == name {
				return c, scope, true
			}
		}
	}
	return nil, "", false
}
