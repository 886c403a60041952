package topggtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// Commands returns the body of the last accepted PUT .../commands, if any.
func (s *Server) Commands() (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands), s.commands != nil
}

func (s *Server) putCommands(c *call) {
	if !s.cfg.project.IsDiscordBot() {
		writeProblem(c.w, http.StatusForbidden, "commands can only be set for Discord bot projects")
		return
	}
	if err := checkCommands(c.body); err != nil {
		writeProblem(c.w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	s.mu.Lock()
	s.commands = slices.Clone(c.body)
	s.mu.Unlock()
	writeNoContent(c.w)
}

// checkCommands wants a JSON array of objects, each with a non-empty string
// name; other members pass through.
func checkCommands(body []byte) error {
	var list []json.RawMessage
	if err := decodeStrict(body, &list); err != nil || list == nil {
		return fmt.Errorf("body must be a JSON array of command objects")
	}
	for i, raw := range list {
		var cmd map[string]json.RawMessage
		if err := json.Unmarshal(raw, &cmd); err != nil || cmd == nil {
			return fmt.Errorf("[%d]: must be a JSON object", i)
		}
		var name string
		if err := json.Unmarshal(cmd["name"], &name); err != nil || name == "" {
			return fmt.Errorf("[%d].name: a non-empty string is required", i)
		}
	}
	return nil
}
