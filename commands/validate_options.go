package commands

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// level is where a list of options sits: what it may hold depends on it.
type level int

const (
	levelCommand    level = iota // a command's options
	levelGroup                   // a subcommand group's options: subcommands only
	levelSubcommand              // a subcommand's options: plain options only
)

// validateOptions checks one list of options at lvl, then each option.
func validateOptions(field, cmd string, opts []*discordgo.ApplicationCommandOption, lvl level) error {
	if len(opts) > maxOptions {
		return invalid(field+".options", cmd, fmt.Sprintf("has %d options", len(opts)), "at most 25 options")
	}
	names := make(map[string]int, len(opts))
	subs, optional := 0, false
	for i, o := range opts {
		f := field + ".options[" + strconv.Itoa(i) + "]"
		if o == nil {
			return invalid(f, cmd, "is nil", "an option definition")
		}
		if err := checkPlacement(f, cmd, o, lvl); err != nil {
			return err
		}
		if j, dup := names[o.Name]; dup {
			return invalid(f+".name", cmd, fmt.Sprintf("%q is also the name of options[%d]", o.Name, j), "unique option names")
		}
		names[o.Name] = i
		if o.Type == discordgo.ApplicationCommandOptionSubCommand || o.Type == discordgo.ApplicationCommandOptionSubCommandGroup {
			subs++
		} else if !o.Required {
			optional = true
		} else if optional {
			return invalid(f+".required", cmd, fmt.Sprintf("option %q is required after an optional one", o.Name),
				"required options before optional ones")
		}
		if err := validateOption(f, cmd, o); err != nil {
			return err
		}
	}
	if subs > 0 && subs < len(opts) {
		return invalid(field+".options", cmd, "mixes subcommands or groups with plain options",
			"either subcommands and groups only, or plain options only")
	}
	return nil
}

// checkPlacement checks the option's type and that it may sit at lvl.
func checkPlacement(f, cmd string, o *discordgo.ApplicationCommandOption, lvl level) error {
	switch {
	case o.Type < discordgo.ApplicationCommandOptionSubCommand || o.Type > discordgo.ApplicationCommandOptionAttachment:
		return invalid(f+".type", cmd, fmt.Sprintf("is %d", o.Type), "an option type from 1 to 11")
	case o.Type == discordgo.ApplicationCommandOptionSubCommandGroup && lvl != levelCommand:
		return invalid(f+".type", cmd, fmt.Sprintf("group %q is nested", o.Name), "subcommand groups only at the top level")
	case o.Type == discordgo.ApplicationCommandOptionSubCommand && lvl == levelSubcommand:
		return invalid(f+".type", cmd, fmt.Sprintf("subcommand %q is inside a subcommand", o.Name),
			"subcommands only at the top level or in a group")
	case lvl == levelGroup && o.Type != discordgo.ApplicationCommandOptionSubCommand:
		return invalid(f+".type", cmd, fmt.Sprintf("option %q is in a group", o.Name), "a subcommand group holds subcommands only")
	}
	return nil
}

// validateOption checks an option's own fields, then its sub-options.
func validateOption(f, cmd string, o *discordgo.ApplicationCommandOption) error {
	if err := checkLocalized(f+".name", cmd, o.Name, o.NameLocalizations, checkChatName); err != nil {
		return err
	}
	if err := checkLocalized(f+".description", cmd, o.Description, o.DescriptionLocalizations, checkLength(1, maxDescriptionLength)); err != nil {
		return err
	}
	switch o.Type {
	case discordgo.ApplicationCommandOptionSubCommandGroup:
		if len(o.Options) == 0 {
			return invalid(f+".options", cmd, fmt.Sprintf("group %q has no subcommand", o.Name), "a group holds 1 to 25 subcommands")
		}
		return validateOptions(f, cmd, o.Options, levelGroup)
	case discordgo.ApplicationCommandOptionSubCommand:
		return validateOptions(f, cmd, o.Options, levelSubcommand)
	}
	if len(o.Options) > 0 {
		return invalid(f+".options", cmd, fmt.Sprintf("option %q has options", o.Name), "only subcommands and groups have options")
	}
	if err := validateChoices(f, cmd, o); err != nil {
		return err
	}
	return validateBounds(f, cmd, o)
}

func validateChoices(f, cmd string, o *discordgo.ApplicationCommandOption) error {
	if len(o.Choices) == 0 {
		return nil
	}
	switch {
	case o.Type != discordgo.ApplicationCommandOptionString && o.Type != discordgo.ApplicationCommandOptionInteger &&
		o.Type != discordgo.ApplicationCommandOptionNumber:
		return invalid(f+".choices", cmd, fmt.Sprintf("option %q of type %d has choices", o.Name, o.Type),
			"choices only on string, integer and number options")
	case o.Autocomplete:
		return invalid(f+".choices", cmd, fmt.Sprintf("option %q has choices and autocomplete", o.Name), "choices or autocomplete, not both")
	case len(o.Choices) > maxChoices:
		return invalid(f+".choices", cmd, fmt.Sprintf("has %d choices", len(o.Choices)), "at most 25 choices")
	}
	for i, ch := range o.Choices {
		cf := f + ".choices[" + strconv.Itoa(i) + "]"
		if ch == nil {
			return invalid(cf, cmd, "is nil", "a choice")
		}
		if err := checkLocalized(cf+".name", cmd, ch.Name, ch.NameLocalizations, checkLength(1, maxChoiceLength)); err != nil {
			return err
		}
		if s, ok := ch.Value.(string); ok && utf8.RuneCountInString(s) > maxChoiceLength {
			return invalid(cf+".value", cmd, fmt.Sprintf("has %d characters", utf8.RuneCountInString(s)), "at most 100 characters")
		}
	}
	return nil
}

// validateBounds checks min/max length and value.
func validateBounds(f, cmd string, o *discordgo.ApplicationCommandOption) error {
	if o.MinLength != nil && (*o.MinLength < 0 || *o.MinLength > maxStringOptionLen) {
		return invalid(f+".min_length", cmd, fmt.Sprintf("is %d", *o.MinLength), "0 to 6000")
	}
	if o.MaxLength != 0 && (o.MaxLength < 1 || o.MaxLength > maxStringOptionLen) {
		return invalid(f+".max_length", cmd, fmt.Sprintf("is %d", o.MaxLength), "1 to 6000")
	}
	if o.MinLength != nil && o.MaxLength != 0 && *o.MinLength > o.MaxLength {
		return invalid(f+".min_length", cmd, fmt.Sprintf("%d is over max_length %d", *o.MinLength, o.MaxLength), "min_length <= max_length")
	}
	if o.MinValue != nil && o.MaxValue != 0 && *o.MinValue > o.MaxValue {
		return invalid(f+".min_value", cmd, fmt.Sprintf("%v is over max_value %v", *o.MinValue, o.MaxValue), "min_value <= max_value")
	}
	return nil
}

// commandCharacters counts what Discord adds up against the 4000 character
// limit of one command: names, descriptions, choice names and values, at
// every level.
func commandCharacters(c *discordgo.ApplicationCommand) int {
	return utf8.RuneCountInString(c.Name) + utf8.RuneCountInString(c.Description) + optionCharacters(c.Options)
}

func optionCharacters(opts []*discordgo.ApplicationCommandOption) int {
	n := 0
	for _, o := range opts {
		n += utf8.RuneCountInString(o.Name) + utf8.RuneCountInString(o.Description) + optionCharacters(o.Options)
		for _, ch := range o.Choices {
			n += utf8.RuneCountInString(ch.Name) + utf8.RuneCountInString(fmt.Sprint(ch.Value))
		}
	}
	return n
}
