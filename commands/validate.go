package commands

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/topgg"
)

// Discord's limits on application commands
// (https://discord.com/developers/docs/interactions/application-commands).
const (
	maxChatInputCommands = 100  // global CHAT_INPUT commands per application
	maxUserCommands      = 5    // USER (user context menu) commands
	maxMessageCommands   = 5    // MESSAGE (message context menu) commands
	maxNameLength        = 32   // command, option and localised names, in characters
	maxDescriptionLength = 100  // descriptions, in characters
	maxOptions           = 25   // options per command, subcommand or group
	maxChoices           = 25   // choices per option
	maxChoiceLength      = 100  // choice names and string choice values, in characters
	maxCommandCharacters = 4000 // names, descriptions and choice names and values of one command together
	maxStringOptionLen   = 6000 // bound of min_length and max_length
)

// Validate checks cmds against Discord's rules for application commands and
// returns the first broken rule as a *topgg.ValidationError whose Field is
// the offending value's path, such as "commands[2].options[0].name".
func Validate(cmds []*discordgo.ApplicationCommand) error {
	type identity struct {
		typ  discordgo.ApplicationCommandType
		name string
	}
	seen := make(map[identity]int, len(cmds))
	perType := map[discordgo.ApplicationCommandType]int{}
	for i, c := range cmds {
		field := "commands[" + strconv.Itoa(i) + "]"
		if c == nil {
			return invalid(field, "", "is nil", "a command definition")
		}
		typ := cmp.Or(c.Type, discordgo.ChatApplicationCommand) // 0 means a chat command
		if err := validateCommand(field, c, typ); err != nil {
			return err
		}
		id := identity{typ, c.Name}
		if j, dup := seen[id]; dup {
			return invalid(field, c.Name, fmt.Sprintf("has the same type and name as commands[%d]", j), "one command per type and name")
		}
		seen[id] = i
		perType[typ]++
		if limit := typeLimit(typ); perType[typ] > limit {
			return invalid(field, c.Name, fmt.Sprintf("is command %d of type %d", perType[typ], typ),
				fmt.Sprintf("at most %d commands of this type", limit))
		}
	}
	return nil
}

func typeLimit(typ discordgo.ApplicationCommandType) int {
	switch typ {
	case discordgo.UserApplicationCommand:
		return maxUserCommands
	case discordgo.MessageApplicationCommand:
		return maxMessageCommands
	}
	return maxChatInputCommands
}

// invalid makes the error: field is the path, cmd the command's name.
func invalid(field, cmd, problem, rule string) error {
	if cmd != "" {
		problem = fmt.Sprintf("%s (command %q)", problem, cmd)
	}
	return &topgg.ValidationError{Field: field, Problem: problem, Rule: rule}
}

func validateCommand(field string, c *discordgo.ApplicationCommand, typ discordgo.ApplicationCommandType) error {
	switch typ {
	case discordgo.ChatApplicationCommand:
	case discordgo.UserApplicationCommand, discordgo.MessageApplicationCommand:
		return validateContextMenu(field, c)
	default:
		return invalid(field+".type", c.Name, fmt.Sprintf("is %d", typ), "1 (CHAT_INPUT), 2 (USER) or 3 (MESSAGE)")
	}
	if err := checkLocalized(field+".name", c.Name, c.Name, deref(c.NameLocalizations), checkChatName); err != nil {
		return err
	}
	if err := checkLocalized(field+".description", c.Name, c.Description, deref(c.DescriptionLocalizations), checkLength(1, maxDescriptionLength)); err != nil {
		return err
	}
	if err := validateOptions(field, c.Name, c.Options, levelCommand); err != nil {
		return err
	}
	if n := commandCharacters(c); n > maxCommandCharacters {
		return invalid(field, c.Name, fmt.Sprintf("has %d characters of names, descriptions and choices", n),
			fmt.Sprintf("at most %d per command", maxCommandCharacters))
	}
	return nil
}

// validateContextMenu checks a USER or MESSAGE command: a name of 1 to 32
// characters of any case, no description, no options.
func validateContextMenu(field string, c *discordgo.ApplicationCommand) error {
	if err := checkLocalized(field+".name", c.Name, c.Name, deref(c.NameLocalizations), checkLength(1, maxNameLength)); err != nil {
		return err
	}
	if c.Description != "" || (c.DescriptionLocalizations != nil && len(*c.DescriptionLocalizations) > 0) {
		return invalid(field+".description", c.Name, "is set", "empty for USER and MESSAGE commands")
	}
	if len(c.Options) > 0 {
		return invalid(field+".options", c.Name, fmt.Sprintf("has %d options", len(c.Options)), "none for USER and MESSAGE commands")
	}
	return nil
}

// checkLength returns the check of a text of lo to hi characters.
func checkLength(lo, hi int) func(field, cmd, s string) error {
	return func(field, cmd, s string) error {
		if n := utf8.RuneCountInString(s); n < lo || n > hi {
			return invalid(field, cmd, fmt.Sprintf("has %d characters", n), fmt.Sprintf("%d to %d characters", lo, hi))
		}
		return nil
	}
}

// checkChatName applies the CHAT_INPUT naming rule to a command or option name.
func checkChatName(field, cmd, name string) error {
	const rule = "1 to 32 characters, each a letter in lower case, a digit, - _ or ' (no spaces)"
	switch {
	case name == "":
		return invalid(field, cmd, "is empty", rule)
	case !validChatInputName(name):
		return invalid(field, cmd, badNameReason(name), rule)
	case strings.ToLower(name) != name:
		return invalid(field, cmd, fmt.Sprintf("%q is not lower case", name), rule)
	}
	return nil
}

// checkLocalized checks value at field, then its localizations in locale
// order (for a stable first error) at field's "_localizations[locale]".
func checkLocalized(field, cmd, value string, locs map[discordgo.Locale]string, check func(field, cmd, v string) error) error {
	if err := check(field, cmd, value); err != nil {
		return err
	}
	for _, loc := range slices.Sorted(maps.Keys(locs)) {
		if err := check(fmt.Sprintf("%s_localizations[%s]", field, string(loc)), cmd, locs[loc]); err != nil {
			return err
		}
	}
	return nil
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// badNameReason says why validChatInputName refused name: its length, or its
// first character not allowed.
func badNameReason(name string) string {
	if n := utf8.RuneCountInString(name); n > maxNameLength {
		return fmt.Sprintf("%q has %d characters", name, n)
	}
	for _, r := range name {
		switch {
		case unicode.IsSpace(r):
			return fmt.Sprintf("%q holds a space", name)
		case !validChatInputName(string(r)):
			return fmt.Sprintf("%q holds %q, which is not allowed", name, r)
		}
	}
	return fmt.Sprintf("%q is not allowed", name)
}

// validChatInputName reports whether name matches Discord's rule for
// CHAT_INPUT names, ^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$ (lower case
// is checked apart), written out to spare a regexp's start-up cost.
func validChatInputName(name string) bool {
	if n := utf8.RuneCountInString(name); n < 1 || n > maxNameLength {
		return false
	}
	for _, r := range name {
		if r != '-' && r != '_' && r != '\'' && !unicode.In(r, unicode.L, unicode.N, unicode.Devanagari, unicode.Thai) {
			return false
		}
	}
	return true
}
