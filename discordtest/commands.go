package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// commandRecord is a registered application command, kept as the JSON the
// Server returns so every read is a deep copy.
type commandRecord struct {
	id   string
	name string
	typ  discordgo.ApplicationCommandType
	raw  json.RawMessage
}

// commandScope reads {app} and {guild} from the path: "" for global
// commands, else the guild ID. It answers 403 Missing Access for another
// application or a guild the bot is not in.
func (s *Server) commandScope(w http.ResponseWriter, r *http.Request) (string, bool) {
	guild := r.PathValue("guild")
	s.mu.Lock()
	_, known := s.guilds[guild]
	s.mu.Unlock()
	if r.PathValue("app") != s.cfg.appID || (guild != "" && !known) {
		writeError(w, http.StatusForbidden, codeMissingAccess, "Missing Access")
		return "", false
	}
	return guild, true
}

func rawList(records []commandRecord) []json.RawMessage {
	out := make([]json.RawMessage, len(records))
	for i, c := range records {
		out[i] = c.raw
	}
	return out
}

func (s *Server) listCommands(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.commandScope(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	list := rawList(s.commands[scope])
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
	if !ok || !decodeJSON(w, r, &cmds) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	records := make([]commandRecord, 0, len(cmds))
	for _, cmd := range cmds {
		if cmd == nil {
			invalidForm(w, "", "BASE_TYPE_REQUIRED", "This field is required")
			return
		}
		rec, err := s.storeCommandLocked(scope, s.commands[scope], cmd)
		if err != nil {
			writeError(w, http.StatusInternalServerError, codeGeneral, err.Error())
			return
		}
		records = append(records, rec)
	}
	s.commands[scope] = records
	s.notifyLocked()
	writeJSON(w, http.StatusOK, rawList(records))
}

// createCommand upserts one command by type and name: 201 when new, 200
// when it replaced one.
func (s *Server) createCommand(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.commandScope(w, r)
	var cmd *discordgo.ApplicationCommand
	if !ok || !decodeJSON(w, r, &cmd) {
		return
	}
	if cmd == nil {
		invalidForm(w, "", "BASE_TYPE_REQUIRED", "command is null")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	records := s.commands[scope]
	rec, err := s.storeCommandLocked(scope, records, cmd)
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeGeneral, err.Error())
		return
	}
	status := http.StatusCreated
	for i := range records {
		if records[i].id == rec.id {
			records[i], status = rec, http.StatusOK
		}
	}
	if status == http.StatusCreated {
		records = append(records, rec)
	}
	s.commands[scope] = records
	s.notifyLocked()
	writeJSON(w, status, rec.raw)
}

// storeCommandLocked fills in what Discord adds to a command (ID, kept when
// old holds one of the same type and name; application, guild, version,
// default type) and encodes it. The caller holds s.mu.
func (s *Server) storeCommandLocked(scope string, old []commandRecord, cmd *discordgo.ApplicationCommand) (commandRecord, error) {
	c := *cmd
	if c.Type == 0 {
		c.Type = discordgo.ChatApplicationCommand
	}
	c.ID = ""
	for _, o := range old {
		if o.typ == c.Type && o.name == c.Name {
			c.ID = o.id
		}
	}
	if c.ID == "" {
		c.ID = s.nextIDLocked()
	}
	c.ApplicationID, c.GuildID, c.Version = s.cfg.appID, scope, s.nextIDLocked()
	if c.Options == nil {
		c.Options = []*discordgo.ApplicationCommandOption{}
	}
	raw, err := json.Marshal(&c)
	if err != nil {
		return commandRecord{}, fmt.Errorf("encode command: %w", err)
	}
	return commandRecord{id: c.ID, name: c.Name, typ: c.Type, raw: raw}, nil
}

// Commands returns the global application commands, as GET
// /applications/{app}/commands would.
func (s *Server) Commands() []*discordgo.ApplicationCommand {
	s.mu.Lock()
	raws := rawList(s.commands[""])
	s.mu.Unlock()
	out := make([]*discordgo.ApplicationCommand, len(raws))
	for i, raw := range raws {
		out[i] = new(discordgo.ApplicationCommand)
		_ = json.Unmarshal(raw, out[i]) // we encoded it
	}
	return out
}

// lookupCommandLocked finds a command by name for an interaction: the
// guild's commands first, then the global ones; scope is "" for a global
// command, else the guild ID. The caller holds s.mu.
func (s *Server) lookupCommandLocked(guildID, name string) (rec commandRecord, scope string, ok bool) {
	for _, scope := range []string{guildID, ""} {
		for _, c := range s.commands[scope] {
			if c.name == name {
				return c, scope, true
			}
		}
	}
	return commandRecord{}, "", false
}
