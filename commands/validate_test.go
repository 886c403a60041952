package commands_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/topgg"
)

type (
	cmd    = discordgo.ApplicationCommand
	option = discordgo.ApplicationCommandOption
	choice = discordgo.ApplicationCommandOptionChoice
)

const (
	optString = discordgo.ApplicationCommandOptionString
	optInt    = discordgo.ApplicationCommandOptionInteger
	optUser   = discordgo.ApplicationCommandOptionUser
	optSub    = discordgo.ApplicationCommandOptionSubCommand
	optGroup  = discordgo.ApplicationCommandOptionSubCommandGroup
)

func chat(name string, opts ...*option) *cmd {
	return &cmd{Name: name, Description: "d", Options: opts}
}

func opt(typ discordgo.ApplicationCommandOptionType, name string, sub ...*option) *option {
	return &option{Type: typ, Name: name, Description: "d", Options: sub}
}

func many[T any](n int, f func(i int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// TestValidateRefusesWhatDiscordRefuses: each broken rule is a
// *topgg.ValidationError naming the path of the value and the rule.
func TestValidateRefusesWhatDiscordRefuses(t *testing.T) {
	t.Parallel()
	withMinLen := opt(optString, "s")
	withMinLen.MinLength, withMinLen.MaxLength = ptr(10), 5
	withChoices := func(typ discordgo.ApplicationCommandOptionType, ch ...*choice) *option {
		o := opt(typ, "o")
		o.Choices = ch
		return o
	}
	auto := withChoices(optString, &choice{Name: "a", Value: "a"})
	auto.Autocomplete = true
	required := opt(optString, "r")
	required.Required = true
	menuWithDescription := &cmd{Type: discordgo.UserApplicationCommand, Name: "Profile", Description: "x"}
	badLocale := chat("vote")
	badLocale.NameLocalizations = &map[discordgo.Locale]string{discordgo.German: "Abstimmen"}

	tests := map[string]struct {
		cmds  []*cmd
		field string
		rule  string
	}{
		"upper case":             {[]*cmd{chat("Vote")}, "commands[0].name", "lower case"},
		"space in chat name":     {[]*cmd{chat("my vote")}, "commands[0].name", "1 to 32 characters"},
		"33 characters":          {[]*cmd{chat(strings.Repeat("a", 33))}, "commands[0].name", "1 to 32 characters"},
		"empty name":             {[]*cmd{chat("")}, "commands[0].name", "1 to 32 characters"},
		"localised name":         {[]*cmd{badLocale}, "commands[0].name_localizations[de]", "lower case"},
		"no description":         {[]*cmd{{Name: "vote"}}, "commands[0].description", "1 to 100"},
		"101 char description":   {[]*cmd{{Name: "vote", Description: strings.Repeat("é", 101)}}, "commands[0].description", "1 to 100"},
		"menu description":       {[]*cmd{menuWithDescription}, "commands[0].description", "empty for USER and MESSAGE"},
		"menu 33 characters":     {[]*cmd{{Type: discordgo.MessageApplicationCommand, Name: strings.Repeat("A", 33)}}, "commands[0].name", "1 to 32"},
		"menu options":           {[]*cmd{{Type: discordgo.UserApplicationCommand, Name: "P", Options: []*option{opt(optString, "s")}}}, "commands[0].options", "none for USER"},
		"unknown type":           {[]*cmd{{Type: 9, Name: "x"}}, "commands[0].type", "1 (CHAT_INPUT)"},
		"26 options":             {[]*cmd{chat("v", many(26, func(i int) *option { return opt(optString, fmt.Sprint("o", i)) })...)}, "commands[0].options", "at most 25 options"},
		"option upper case":      {[]*cmd{chat("v", opt(optString, "Kind"))}, "commands[0].options[0].name", "lower case"},
		"option description":     {[]*cmd{chat("v", &option{Type: optString, Name: "k"})}, "commands[0].options[0].description", "1 to 100"},
		"same option name":       {[]*cmd{chat("v", opt(optString, "k"), opt(optInt, "k"))}, "commands[0].options[1].name", "unique option names"},
		"required after opt":     {[]*cmd{chat("v", opt(optString, "o"), required)}, "commands[0].options[1].required", "required options before optional"},
		"mixed subcommands":      {[]*cmd{chat("v", opt(optSub, "a"), opt(optString, "b"))}, "commands[0].options", "subcommands and groups only"},
		"group in group":         {[]*cmd{chat("v", opt(optGroup, "g", opt(optGroup, "h", opt(optSub, "s"))))}, "commands[0].options[0].options[0].type", "groups only at the top"},
		"sub in sub":             {[]*cmd{chat("v", opt(optSub, "a", opt(optSub, "b")))}, "commands[0].options[0].options[0].type", "subcommands only at the top level or in a group"},
		"plain in group":         {[]*cmd{chat("v", opt(optGroup, "g", opt(optString, "s")))}, "commands[0].options[0].options[0].type", "holds subcommands only"},
		"empty group":            {[]*cmd{chat("v", opt(optGroup, "g"))}, "commands[0].options[0].options", "1 to 25 subcommands"},
		"26 choices":             {[]*cmd{chat("v", withChoices(optString, many(26, func(i int) *choice { return &choice{Name: fmt.Sprint(i), Value: fmt.Sprint(i)} })...))}, "commands[0].options[0].choices", "at most 25 choices"},
		"choice name 101":        {[]*cmd{chat("v", withChoices(optString, &choice{Name: strings.Repeat("a", 101), Value: "a"}))}, "commands[0].options[0].choices[0].name", "1 to 100"},
		"empty choice name":      {[]*cmd{chat("v", withChoices(optInt, &choice{Name: "", Value: 1}))}, "commands[0].options[0].choices[0].name", "1 to 100"},
		"choice value 101":       {[]*cmd{chat("v", withChoices(optString, &choice{Name: "a", Value: strings.Repeat("a", 101)}))}, "commands[0].options[0].choices[0].value", "at most 100"},
		"choices on user":        {[]*cmd{chat("v", withChoices(optUser, &choice{Name: "a", Value: "1"}))}, "commands[0].options[0].choices", "only on string, integer and number"},
		"choices + autocomplete": {[]*cmd{chat("v", auto)}, "commands[0].options[0].choices", "not both"},
		"min over max length":    {[]*cmd{chat("v", withMinLen)}, "commands[0].options[0].min_length", "min_length <= max_length"},
		"same type and name":     {[]*cmd{chat("v"), {Type: discordgo.ChatApplicationCommand, Name: "v", Description: "again"}}, "commands[1]", "one command per type and name"},
		"101 chat commands":      {many(101, func(i int) *cmd { return chat(fmt.Sprint("c", i)) }), "commands[100]", "at most 100 commands"},
		"6 user commands":        {many(6, func(i int) *cmd { return &cmd{Type: discordgo.UserApplicationCommand, Name: fmt.Sprint("U ", i)} }), "commands[5]", "at most 5 commands"},
		"over 4000 characters": {[]*cmd{chat("v", many(25, func(i int) *option {
			o := opt(optString, fmt.Sprint("o", i))
			o.Description = strings.Repeat("d", 100)
			o.Choices = many(25, func(j int) *choice { return &choice{Name: strings.Repeat("n", 50), Value: fmt.Sprint(j)} })
			return o
		})...)}, "commands[0]", "at most 4000"},
	}
	for name, tc := range tests {
		err := commands.Validate(tc.cmds)
		var verr *topgg.ValidationError
		if assert.ErrorAs(t, err, &verr, name) {
			assert.Equal(t, tc.field, verr.Field, name)
			assert.Contains(t, verr.Rule, tc.rule, name)
			assert.False(t, topgg.Retryable(err), name)
		}
	}
}

// TestValidateAcceptsWhatDiscordAccepts: the edges of each rule pass.
func TestValidateAcceptsWhatDiscordAccepts(t *testing.T) {
	t.Parallel()
	required := opt(optString, "first")
	required.Required = true
	cmds := []*cmd{
		chat(strings.Repeat("a", 32)),
		chat("vote-for_the-bot'"),
		chat("नमस्ते"), // Devanagari, with its combining marks
		chat("สวัสดี"), // Thai
		chat("ünïcode", required, opt(optString, "second")),
		chat("config", opt(optGroup, "rewards", opt(optSub, "set", opt(optString, "kind"))), opt(optSub, "show")),
		{Name: "long", Description: strings.Repeat("d", 100)},
		{Type: discordgo.UserApplicationCommand, Name: "View Profile"},
		{Type: discordgo.MessageApplicationCommand, Name: strings.Repeat("M", 32)},
		{Type: discordgo.UserApplicationCommand, Name: "vote"}, // another type: another command
	}
	require.NoError(t, commands.Validate(cmds))
	require.NoError(t, commands.Validate(append(
		many(100, func(i int) *cmd { return chat(fmt.Sprint("c", i)) }),
		append(many(5, func(i int) *cmd { return &cmd{Type: discordgo.UserApplicationCommand, Name: fmt.Sprint("U ", i)} }),
			many(5, func(i int) *cmd { return &cmd{Type: discordgo.MessageApplicationCommand, Name: fmt.Sprint("M ", i)} })...)...)))
	require.NoError(t, commands.Validate(botCommands()))
	require.NoError(t, commands.Validate(nil))
}

// TestCommandNameErrorSaysTheRule: a chat command name with a space is
// refused with a plain rule ("no spaces") and the character at fault, not a
// regular expression.
func TestCommandNameErrorSaysTheRule(t *testing.T) {
	t.Parallel()
	err := commands.Validate([]*discordgo.ApplicationCommand{{Name: "my command", Description: "d"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"my command" holds a space`)
	assert.Contains(t, err.Error(), "no spaces")
	assert.NotContains(t, err.Error(), `\p{`)
	err = commands.Validate([]*discordgo.ApplicationCommand{{Name: "vote!", Description: "d"}})
	assert.Contains(t, err.Error(), `"vote!" holds '!', which is not allowed`)
}
