package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/bwmarrin/discordgo"
)

// commandScope reads {app} and {guild} from the path: "" for global
// commands, else the guild ID. It answers 403 Missing Access for another
// application or a guild the bot is not in.
func (s *Server) commandScope(w http.ResponseWriter, r *http.Request) (string, bool) {
	guild := r.PathValue("guild")
	s.mu.Lock()
	_, known := s.guilds[guild]
	s.mu.Unlock()
	if r.PathValue("app") != s.cfg.appID || (guild != "" && !known) {
		writeError(w, http.StatusForbidden, 50001, "Missing Access")
		return "", false
	}
	return guild, true
}

// Stored commands are never changed, only replaced: a copy of the list can
// be encoded without the lock.
func (s *Server) listCommands(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.commandScope(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	list := append([]*discordgo.ApplicationCommand{}, s.commands[scope]...)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, list)
}

// overwriteCommands is the bulk overwrite: the list replaces the scope's
// commands. A command keeps its ID when one of the same type and name
// existed, as on Discord. The fake checks no rule of Discord's on the
// definitions: package commands checks them before anything is sent.
func (s *Server) overwriteCommands(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.commandScope(w, r)
	var cmds []*discordgo.ApplicationCommand
	if !ok || !decodeJSON(w, r.Body, &cmds) {
		return
	}
	if slices.Contains(cmds, nil) {
		invalidForm(w, "", "BASE_TYPE_REQUIRED", "This field is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]*discordgo.ApplicationCommand, len(cmds))
	for i, cmd := range cmds {
		list[i] = s.storeCommandLocked(scope, s.commands[scope], cmd)
	}
	s.commands[scope] = list
	s.notifyLocked()
	writeJSON(w, http.StatusOK, list)
}

// createCommand upserts one command by type and name: 201 when new, 200
// when it replaced one.
func (s *Server) createCommand(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.commandScope(w, r)
	var cmd *discordgo.ApplicationCommand
	if !ok || !decodeJSON(w, r.Body, &cmd) {
		return
	}
	if cmd == nil {
		invalidForm(w, "", "BASE_TYPE_REQUIRED", "command is null")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := slices.Clone(s.commands[scope])
	cmd = s.storeCommandLocked(scope, list, cmd)
	status := http.StatusCreated
	if i := slices.IndexFunc(list, func(c *discordgo.ApplicationCommand) bool { return c.ID == cmd.ID }); i >= 0 {
		list[i], status = cmd, http.StatusOK
	} else {
		list = append(list, cmd)
	}
	s.commands[scope] = list
	s.notifyLocked()
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
