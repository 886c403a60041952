package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

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

// Limits Discord applies to application commands.
const (
	maxCommandName        = 32
	maxCommandDescription = 100
	maxCommandOptions     = 25
	maxChatInputCommands  = 100
	maxContextCommands    = 5 // each of user and message commands
)

// chatInputName is Discord's rule for CHAT_INPUT command and option names
// (letters must be lower case where the script has cases; checked apart).
var chatInputName = regexp.MustCompile(`^[-_'\p{L}\p{N}\p{Devanagari}\p{Thai}]{1,32}$`)

// commandScope reads {app} and {guild} from the path: "" for global
// commands, else the guild ID. It answers 403 Missing Access for another
// application or a guild the bot is not in.
func (s *Server) commandScope(w http.ResponseWriter, r *http.Request) (string, bool) {
	if r.PathValue("app") != s.cfg.appID {
		writeError(w, http.StatusForbidden, codeMissingAccess, "Missing Access")
		return "", false
	}
	guild := r.PathValue("guild")
	if guild == "" {
		return "", true
	}
	s.mu.Lock()
	_, ok := s.guilds[guild]
	s.mu.Unlock()
	if !ok {
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
// existed, as on Discord.
func (s *Server) overwriteCommands(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.commandScope(w, r)
	if !ok {
		return
	}
	var cmds []*discordgo.ApplicationCommand
	if !decodeJSON(w, r, &cmds) {
		return
	}
	if errs := validateCommands(cmds); errs != nil {
		invalidForm(w, errs)
		return
	}
	s.mu.Lock()
	old := s.commands[scope]
	records := make([]commandRecord, 0, len(cmds))
	for _, cmd := range cmds {
		rec, err := s.storeCommandLocked(scope, old, cmd)
		if err != nil {
			s.mu.Unlock()
			writeError(w, http.StatusInternalServerError, codeGeneral, err.Error())
			return
		}
		records = append(records, rec)
	}
	s.commands[scope] = records
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, rawList(records))
}

// createCommand upserts one command by type and name: 201 when new, 200
// when it replaced one.
func (s *Server) createCommand(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.commandScope(w, r)
	if !ok {
		return
	}
	var cmd *discordgo.ApplicationCommand
	if !decodeJSON(w, r, &cmd) {
		return
	}
	if cmd == nil {
		invalidForm(w, map[string]any{"_errors": []map[string]string{{"code": "BASE_TYPE_REQUIRED", "message": "command is null"}}})
		return
	}
	if errs := validateCommands([]*discordgo.ApplicationCommand{cmd}); errs != nil {
		invalidForm(w, errs["0"])
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
	replaced := false
	for i := range records {
		if records[i].id == rec.id {
			records[i], replaced = rec, true
			status = http.StatusOK
		}
	}
	if !replaced {
		if countType(records, rec.typ) >= typeLimit(rec.typ) {
			writeError(w, http.StatusBadRequest, codeMaxCommands, "Maximum number of application commands reached")
			return
		}
		records = append(records, rec)
	}
	s.commands[scope] = records
	s.notifyLocked()
	writeJSON(w, status, rec.raw)
}

// findCommandLocked returns the index of command {command} in scope, or
// answers 404 Unknown application command. The caller holds s.mu.
func (s *Server) findCommandLocked(w http.ResponseWriter, r *http.Request, scope string) (int, bool) {
	id := r.PathValue("command")
	for i, c := range s.commands[scope] {
		if c.id == id {
			return i, true
		}
	}
	writeError(w, http.StatusNotFound, codeUnknownCommand, "Unknown application command")
	return 0, false
}

func (s *Server) getCommand(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.commandScope(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.findCommandLocked(w, r, scope); ok {
		writeJSON(w, http.StatusOK, s.commands[scope][i].raw)
	}
}

func (s *Server) deleteCommand(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.commandScope(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.findCommandLocked(w, r, scope); ok {
		s.commands[scope] = append(s.commands[scope][:i:i], s.commands[scope][i+1:]...)
		s.notifyLocked()
		w.WriteHeader(http.StatusNoContent)
	}
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
	c.ApplicationID = s.cfg.appID
	c.GuildID = scope
	c.Version = s.nextIDLocked()
	if c.Options == nil {
		c.Options = []*discordgo.ApplicationCommandOption{}
	}
	raw, err := json.Marshal(&c)
	if err != nil {
		return commandRecord{}, fmt.Errorf("encode command: %w", err)
	}
	return commandRecord{id: c.ID, name: c.Name, typ: c.Type, raw: raw}, nil
}

func countType(records []commandRecord, typ discordgo.ApplicationCommandType) int {
	n := 0
	for _, r := range records {
		if r.typ == typ {
			n++
		}
	}
	return n
}

func typeLimit(typ discordgo.ApplicationCommandType) int {
	if typ == discordgo.ChatApplicationCommand || typ == 0 {
		return maxChatInputCommands
	}
	return maxContextCommands
}

// formErrors collects Discord-style field errors:
// {"0": {"name": {"_errors": [{"code": ..., "message": ...}]}}}.
type formErrors map[string]map[string]any

func (f formErrors) add(index int, field, code, message string) {
	key := strconv.Itoa(index)
	if f[key] == nil {
		f[key] = map[string]any{}
	}
	f[key][field] = map[string]any{"_errors": []map[string]string{{"code": code, "message": message}}}
}

// validateCommands applies Discord's rules for names, descriptions, option
// counts, duplicates and per-type limits; nil means valid.
func validateCommands(cmds []*discordgo.ApplicationCommand) formErrors {
	errs := formErrors{}
	seen := map[string]bool{}
	counts := map[discordgo.ApplicationCommandType]int{}
	for i, cmd := range cmds {
		if cmd == nil {
			errs.add(i, "_errors", "BASE_TYPE_REQUIRED", "This field is required")
			continue
		}
		typ := cmd.Type
		if typ == 0 {
			typ = discordgo.ChatApplicationCommand
		}
		if typ < discordgo.ChatApplicationCommand || typ > discordgo.MessageApplicationCommand {
			errs.add(i, "type", "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3).")
			continue
		}
		counts[typ]++
		if counts[typ] > typeLimit(typ) {
			errs.add(i, "_errors", "APPLICATION_COMMANDS_TOO_MANY", "Too many application commands of this type.")
		}
		key := fmt.Sprintf("%d/%s", typ, cmd.Name)
		if seen[key] {
			errs.add(i, "name", "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")
		}
		seen[key] = true
		if typ == discordgo.ChatApplicationCommand {
			checkChatCommand(errs, i, cmd)
		} else {
			checkContextCommand(errs, i, cmd)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// checkChatCommand applies the rules of a slash command (and its options) to
// cmd, the i-th command.
func checkChatCommand(errs formErrors, i int, cmd *discordgo.ApplicationCommand) {
	checkChatInput(errs, i, "", cmd.Name, cmd.Description)
	if len(cmd.Options) > maxCommandOptions {
		errs.add(i, "options", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
	}
	for j, opt := range cmd.Options {
		if opt == nil {
			errs.add(i, fmt.Sprintf("options.%d", j), "BASE_TYPE_REQUIRED", "This field is required")
			continue
		}
		checkChatInput(errs, i, fmt.Sprintf("options.%d.", j), opt.Name, opt.Description)
	}
}

// checkContextCommand applies the rules of a context menu command (user or
// message) to cmd, the i-th command.
func checkContextCommand(errs formErrors, i int, cmd *discordgo.ApplicationCommand) {
	if n := utf8.RuneCountInString(cmd.Name); n < 1 || n > maxCommandName {
		errs.add(i, "name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 32 in length.")
	}
	if cmd.Description != "" {
		errs.add(i, "description", "APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION", "Context menu commands cannot have description")
	}
}

func checkChatInput(errs formErrors, i int, prefix, name, description string) {
	switch {
	case !chatInputName.MatchString(name):
		errs.add(i, prefix+"name", "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
	case name != strings.ToLower(name):
		errs.add(i, prefix+"name", "APPLICATION_COMMAND_INVALID_NAME", "Command name must be lower case")
	}
	if n := utf8.RuneCountInString(description); n < 1 || n > maxCommandDescription {
		errs.add(i, prefix+"description", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
	}
}

// Commands returns the global application commands, as GET
// /applications/{app}/commands would.
func (s *Server) Commands() []*discordgo.ApplicationCommand { return s.scopeCommands("") }

// guildCommands returns the application commands registered for one guild.
func (s *Server) guildCommands(guildID string) []*discordgo.ApplicationCommand {
	if guildID == "" {
		return nil
	}
	return s.scopeCommands(guildID)
}

func (s *Server) scopeCommands(scope string) []*discordgo.ApplicationCommand {
	s.mu.Lock()
	records := s.commands[scope]
	out := make([]*discordgo.ApplicationCommand, 0, len(records))
	raws := rawList(records)
	s.mu.Unlock()
	for _, raw := range raws {
		var c discordgo.ApplicationCommand
		if err := json.Unmarshal(raw, &c); err == nil { // we encoded it
			out = append(out, &c)
		}
	}
	return out
}

// lookupCommandLocked finds a command by name for an interaction: the
// guild's commands first, then the global ones; scope is "" for a global
// command, else the guild ID. The caller holds s.mu.
func (s *Server) lookupCommandLocked(guildID, name string) (rec commandRecord, scope string, ok bool) {
	scopes := []string{""}
	if guildID != "" {
		scopes = []string{guildID, ""}
	}
	for _, scope := range scopes {
		for _, c := range s.commands[scope] {
			if c.name == name {
				return c, scope, true
			}
		}
	}
	return commandRecord{}, "", false
}
