package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/bwmarrin/discordgo"
)

// serverAssigned reports the members Discord assigns to a registered command.
// They say nothing about what the command is, and differ between a command the
// bot is about to register and the same command read back from Discord.
func serverAssigned(key string) bool {
	switch key {
	case "id", "application_id", "guild_id", "version":
		return true
	}
	return false
}

// emptyMeansAbsent are the members whose empty value means the same as no
// value. discordgo encodes some of them without omitempty (options,
// choices, channel_types), so "none" comes out as null or [] depending on how
// the slice was built.
func emptyMeansAbsent(key string) bool {
	switch key {
	case "options", "choices", "channel_types", "name_localizations", "description_localizations":
		return true
	}
	return false
}

// falseMeansAbsent are option members that discordgo always encodes and whose
// false is Discord's default, so that a bot that leaves them out and one that
// sets them to false describe the same option.
func falseMeansAbsent(key string) bool {
	return key == "required" || key == "autocomplete"
}

// Normalize returns the definitions to publish for cmds, one JSON object per
// command, in the order of cmds: each command as discordgo sends it to
// Discord, without what Discord assigns (id, application_id, guild_id,
// version), in a canonical form (sorted members; no null, empty or false
// members that mean the default; type 1 when none is set). The order of
// commands, options and choices is kept, since Discord shows them in it.
// Equal definitions always give equal bytes, and Normalize of its own output
// gives the same bytes again.
//
// Definitions that break one of Discord's rules fail as [Validate] says; a
// value that cannot be encoded (a NaN choice) fails with the encoder's error.
// cmds is only read.
func Normalize(cmds []*discordgo.ApplicationCommand) ([]json.RawMessage, error) {
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
	for k := range m {
		if serverAssigned(k) {
			delete(m, k)
		}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = json.Number(strconv.Itoa(int(discordgo.ChatApplicationCommand)))
	}
	canonical(m, false)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Descriptions often hold '&' or '<'; keep them readable. The bytes stay
	// deterministic either way.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil { // encoding/json sorts map keys
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// canonical drops, in place, the members of obj that mean the same as their
// absence, and recurses into options and choices. isOption is true for an
// option object.
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

// meansAbsent reports whether member k of value v means the same as no member
// k at all. isOption is true for a member of an option object.
func meansAbsent(k string, v any, isOption bool) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return isOption && !v && falseMeansAbsent(k)
	case []any:
		return len(v) == 0 && emptyMeansAbsent(k)
	case map[string]any:
		return len(v) == 0 && emptyMeansAbsent(k)
	}
	return false
}
