package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/bwmarrin/discordgo"
)

// emptyMeansAbsent are the members whose empty value (null or [], as
// discordgo encodes some without omitempty) means no value.
func emptyMeansAbsent(key string) bool {
	switch key {
	case "options", "choices", "channel_types", "name_localizations", "description_localizations":
		return true
	}
	return false
}

// Normalize returns one canonical JSON object per command, in order, without
// what Discord assigns: equal definitions give equal bytes. Invalid cmds fail
// as [Validate] says.
func Normalize(cmds []*discordgo.ApplicationCommand) ([]json.RawMessage, error) {
	// Canonical: sorted members; no null, empty or false member meaning the
	// default; type 1 when none is set. Order of options and choices is kept.
	if err := Validate(cmds); err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(cmds))
	for i, c := range cmds {
		raw, err := normalizeOne(c)
		if err != nil {
			return nil, fmt.Errorf("commands: encoding commands[%d] (%q): %w", i, c.Name, err)
		}
		out = append(out, raw)
	}
	return out, nil
}

func normalizeOne(c *discordgo.ApplicationCommand) (json.RawMessage, error) {
	// Going through discordgo's own encoding keeps the wire form Discord gets,
	// including its quirks (permissions as a decimal string).
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as discordgo wrote them
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	// What Discord assigns to a registered command differs between a command
	// sent and read back.
	for _, k := range []string{"id", "application_id", "guild_id", "version"} {
		delete(m, k)
	}
	if _, ok := m["type"]; !ok {
		m["type"] = json.Number(strconv.Itoa(int(discordgo.ChatApplicationCommand)))
	}
	canonical(m, false)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Keep '&' and '<' in descriptions readable.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil { // encoding/json sorts map keys
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// canonical drops, in place, the members of obj (an option if isOption)
// that mean the same as their absence, recursively.
func canonical(obj map[string]any, isOption bool) {
	for k, v := range obj {
		if meansAbsent(k, v, isOption) {
			delete(obj, k)
			continue
		}
		if list, ok := v.([]any); ok && (k == "options" || k == "choices") {
			for _, item := range list {
				if sub, ok := item.(map[string]any); ok {
					canonical(sub, k == "options")
				}
			}
		}
	}
}

// meansAbsent reports whether member k of value v means no member k.
func meansAbsent(k string, v any, isOption bool) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool: // options' members discordgo always encodes, whose false is Discord's default
		return isOption && !v && (k == "required" || k == "autocomplete")
	case []any:
		return len(v) == 0 && emptyMeansAbsent(k)
	case map[string]any:
		return len(v) == 0 && emptyMeansAbsent(k)
	}
	return false
}
