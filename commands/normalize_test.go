package commands_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/topgg"
)

func joinDefs(defs []json.RawMessage) string {
	parts := make([]string, len(defs))
	for i, d := range defs {
		parts[i] = string(d)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestNormalizeMatchesHandWrittenDefinitions(t *testing.T) {
	t.Parallel()
	defs, err := commands.Normalize(botCommands())
	require.NoError(t, err)
	require.Len(t, defs, 3)
	require.JSONEq(t, wantBotCommands, joinDefs(defs))
}

func TestNormalizeDropsServerAssignedFields(t *testing.T) {
	t.Parallel()
	cmd := &discordgo.ApplicationCommand{
		ID: "1", ApplicationID: "2", GuildID: "3", Version: "4",
		Name: "ping", Description: "Pong",
	}
	defs, err := commands.Normalize([]*discordgo.ApplicationCommand{cmd})
	require.NoError(t, err)
	require.Equal(t, `{"description":"Pong","name":"ping","type":1}`, string(defs[0]))
}

func TestNormalizeOutputIsCanonical(t *testing.T) {
	t.Parallel()
	defs, err := commands.Normalize(botCommands())
	require.NoError(t, err)
	for _, d := range defs {
		var v any
		require.NoError(t, json.Unmarshal(d, &v))
		sorted, err := json.Marshal(v) // encoding/json sorts keys and compacts
		require.NoError(t, err)
		// The only difference json.Marshal may make is HTML escaping, which
		// Normalize leaves out on purpose.
		require.Equal(t, string(sorted), strings.ReplaceAll(string(d), "&", `\u0026`))
		require.NotContains(t, string(d), "null")
	}
	require.Contains(t, string(defs[0]), "Vote for the bot & get a reward")
}

func TestNormalizeEquivalentFormsGiveEqualBytes(t *testing.T) {
	t.Parallel()
	base := func() *discordgo.ApplicationCommand {
		return &discordgo.ApplicationCommand{
			Type: discordgo.ChatApplicationCommand, Name: "ping", Description: "Pong",
			Options: []*discordgo.ApplicationCommandOption{{
				Type: discordgo.ApplicationCommandOptionString, Name: "text", Description: "Text",
			}},
		}
	}
	tests := map[string]func(*discordgo.ApplicationCommand){
		"type left to default": func(c *discordgo.ApplicationCommand) { c.Type = 0 },
		"ids and version":      func(c *discordgo.ApplicationCommand) { c.ID, c.ApplicationID, c.Version = "9", "8", "7" },
		"empty localisations": func(c *discordgo.ApplicationCommand) {
			c.NameLocalizations = &map[discordgo.Locale]string{}
			c.DescriptionLocalizations = &map[discordgo.Locale]string{}
			c.Options[0].NameLocalizations = map[discordgo.Locale]string{}
		},
		"empty option lists": func(c *discordgo.ApplicationCommand) {
			c.Options[0].Options = []*discordgo.ApplicationCommandOption{}
			c.Options[0].Choices = []*discordgo.ApplicationCommandOptionChoice{}
			c.Options[0].ChannelTypes = []discordgo.ChannelType{}
		},
		"explicit false defaults": func(c *discordgo.ApplicationCommand) {
			c.Options[0].Required = false
			c.Options[0].Autocomplete = false
		},
	}
	want, err := commands.Normalize([]*discordgo.ApplicationCommand{base()})
	require.NoError(t, err)
	require.Equal(t, `{"description":"Pong","name":"ping","options":[{"description":"Text","name":"text","type":3}],"type":1}`, string(want[0]))
	for name, change := range tests {
		c := base()
		change(c)
		got, err := commands.Normalize([]*discordgo.ApplicationCommand{c})
		require.NoError(t, err, name)
		require.Equal(t, string(want[0]), string(got[0]), name)
	}

	// A command without options and one with an empty list are the same too.
	a := &discordgo.ApplicationCommand{Name: "a", Description: "A"}
	b := &discordgo.ApplicationCommand{Name: "a", Description: "A", Options: []*discordgo.ApplicationCommandOption{}}
	da, err := commands.Normalize([]*discordgo.ApplicationCommand{a})
	require.NoError(t, err)
	db, err := commands.Normalize([]*discordgo.ApplicationCommand{b})
	require.NoError(t, err)
	require.Equal(t, string(da[0]), string(db[0]))
}

func TestNormalizeKeepsMeaningfulValues(t *testing.T) {
	t.Parallel()
	cmd := &discordgo.ApplicationCommand{
		Name: "ban", Description: "Ban someone",
		DefaultMemberPermissions: ptr(int64(0)), // 0: admins only, not "unset"
		//lint:ignore SA1019 bots still set it; it must reach the listing.
		DMPermission: ptr(false),
		NSFW:         ptr(true),
		Options: []*discordgo.ApplicationCommandOption{{
			Type: discordgo.ApplicationCommandOptionInteger, Name: "days", Description: "Days",
			Required: true, MinValue: ptr(0.0),
			Choices: []*discordgo.ApplicationCommandOptionChoice{{Name: "none", Value: 0}},
		}},
	}
	defs, err := commands.Normalize([]*discordgo.ApplicationCommand{cmd})
	require.NoError(t, err)
	require.JSONEq(t, `{"type":1,"name":"ban","description":"Ban someone","default_member_permissions":"0",
		"dm_permission":false,"nsfw":true,
		"options":[{"type":4,"name":"days","description":"Days","required":true,"min_value":0,
		"choices":[{"name":"none","value":0}]}]}`, string(defs[0]))
}

func TestNormalizeKeepsOrder(t *testing.T) {
	t.Parallel()
	cmds := []*discordgo.ApplicationCommand{
		{Name: "zeta", Description: "Z", Options: []*discordgo.ApplicationCommandOption{
			{Type: discordgo.ApplicationCommandOptionString, Name: "second", Description: "2", Choices: []*discordgo.ApplicationCommandOptionChoice{
				{Name: "b", Value: "b"}, {Name: "a", Value: "a"},
			}},
			{Type: discordgo.ApplicationCommandOptionString, Name: "first", Description: "1"},
		}},
		{Name: "alpha", Description: "A"},
	}
	defs, err := commands.Normalize(cmds)
	require.NoError(t, err)
	require.Equal(t,
		`[{"description":"Z","name":"zeta","options":[{"choices":[{"name":"b","value":"b"},{"name":"a","value":"a"}],"description":"2","name":"second","type":3},{"description":"1","name":"first","type":3}],"type":1},{"description":"A","name":"alpha","type":1}]`,
		joinDefs(defs))
}

func TestNormalizeEmpty(t *testing.T) {
	t.Parallel()
	for _, in := range [][]*discordgo.ApplicationCommand{nil, {}} {
		defs, err := commands.Normalize(in)
		require.NoError(t, err)
		require.NotNil(t, defs, "an empty list must encode as [], not null")
		require.Empty(t, defs)
	}
}

func TestNormalizeRejectsInvalidDefinitions(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		cmds  []*discordgo.ApplicationCommand
		field string
	}{
		"nil":     {[]*discordgo.ApplicationCommand{{Name: "a", Description: "A"}, nil}, "commands[1]"},
		"no name": {[]*discordgo.ApplicationCommand{{Description: "A"}}, "commands[0].name"},
		"same type and name": {[]*discordgo.ApplicationCommand{
			{Name: "a", Description: "A"},
			{Type: discordgo.ChatApplicationCommand, Name: "a", Description: "B"},
		}, "commands[1]"},
	}
	for name, tc := range tests {
		_, err := commands.Normalize(tc.cmds)
		var verr *topgg.ValidationError
		require.ErrorAs(t, err, &verr, name)
		require.Equal(t, tc.field, verr.Field, name)
	}

	// The same name with another type is another command.
	_, err := commands.Normalize([]*discordgo.ApplicationCommand{
		{Name: "report", Description: "Report"},
		{Type: discordgo.UserApplicationCommand, Name: "report"},
		{Type: discordgo.MessageApplicationCommand, Name: "report"},
	})
	require.NoError(t, err)

	nan := []*discordgo.ApplicationCommand{{Name: "n", Description: "N", Options: []*discordgo.ApplicationCommandOption{{
		Type: discordgo.ApplicationCommandOptionNumber, Name: "x", Description: "X",
		Choices: []*discordgo.ApplicationCommandOptionChoice{{Name: "nan", Value: math.NaN()}},
	}}}}
	_, err = commands.Normalize(nan)
	require.ErrorContains(t, err, "commands[0]")
	var verr *topgg.ValidationError
	require.NotErrorAs(t, err, &verr)
}

func TestNormalizeDoesNotChangeItsInput(t *testing.T) {
	t.Parallel()
	in := botCommands()
	before, err := json.Marshal(in)
	require.NoError(t, err)
	_, err = commands.Normalize(in)
	require.NoError(t, err)
	after, err := json.Marshal(in)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after))
}

// FuzzNormalize decodes arbitrary JSON as discordgo commands (as
// SyncFromDiscord does with Discord's answer) and checks that Normalize never
// panics, is deterministic, and is idempotent: its output, decoded back into
// commands, normalises to the same bytes.
func FuzzNormalize(f *testing.F) {
	seed, err := json.Marshal(botCommands())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(wantBotCommands))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"name":"a","description":"A","options":null,"name_localizations":{}}]`))
	f.Add([]byte(`[{"name":"a","type":2},{"name":"a","type":1,"description":"x"}]`))
	f.Add([]byte(`[{"name":"n","description":"N","options":[{"type":10,"name":"x","choices":[{"name":"big","value":1e300},{"name":"s","value":"<&>"}],"min_value":-0.5}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cmds []*discordgo.ApplicationCommand
		if json.Unmarshal(data, &cmds) != nil {
			return
		}
		defs, err := commands.Normalize(cmds)
		if err != nil {
			var verr *topgg.ValidationError
			if !errors.As(err, &verr) && !strings.HasPrefix(err.Error(), "commands: encoding ") {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if len(defs) != len(cmds) {
			t.Fatalf("%d definitions for %d commands", len(defs), len(cmds))
		}
		again, err := commands.Normalize(cmds)
		if err != nil || !equalDefs(defs, again) {
			t.Fatalf("not deterministic: %s vs %s (%v)", joinDefs(defs), joinDefs(again), err)
		}
		var back []*discordgo.ApplicationCommand
		if err := json.Unmarshal([]byte(joinDefs(defs)), &back); err != nil {
			t.Fatalf("output does not decode: %v", err)
		}
		twice, err := commands.Normalize(back)
		if err != nil || !equalDefs(defs, twice) {
			t.Fatalf("not idempotent:\n%s\n%s (%v)", joinDefs(defs), joinDefs(twice), err)
		}
	})
}

// FuzzNormalizeMapOrder builds the same localisations by inserting entries
// in opposite orders and checks that the bytes do not depend on it (nor on
// Go's random map iteration, exercised by normalising several times).
func FuzzNormalizeMapOrder(f *testing.F) {
	f.Add("de,fr,ja,ko,zh-CN", "Abstimmen", "Choice")
	f.Add("es-ES,pt-BR", "", "")
	f.Fuzz(func(t *testing.T, locales, text, choice string) {
		keys := strings.Split(locales, ",")
		build := func(order []string) *discordgo.ApplicationCommand {
			names := map[discordgo.Locale]string{}
			descs := map[discordgo.Locale]string{}
			optDescs := map[discordgo.Locale]string{}
			for _, k := range order {
				names[discordgo.Locale(k)] = text + k
				descs[discordgo.Locale(k)] = strings.Repeat(text, len(k)%3) + k
				optDescs[discordgo.Locale(k)] = choice + k
			}
			return &discordgo.ApplicationCommand{
				Name: "cmd", Description: "desc",
				NameLocalizations: &names, DescriptionLocalizations: &descs,
				Options: []*discordgo.ApplicationCommandOption{{
					Type: discordgo.ApplicationCommandOptionString, Name: "opt", Description: "o",
					DescriptionLocalizations: optDescs,
					Choices: []*discordgo.ApplicationCommandOptionChoice{
						{Name: choice + "x", Value: choice, NameLocalizations: optDescs},
					},
				}},
			}
		}
		reversed := slices.Clone(keys)
		slices.Reverse(reversed)

		want, err := commands.Normalize([]*discordgo.ApplicationCommand{build(keys)})
		if err != nil {
			return
		}
		for range 4 {
			got, err := commands.Normalize([]*discordgo.ApplicationCommand{build(reversed)})
			if err != nil || !equalDefs(want, got) {
				t.Fatalf("depends on map order:\n%s\n%s (%v)", want[0], got[0], err)
			}
		}
	})
}

func equalDefs(a, b []json.RawMessage) bool {
	return slices.EqualFunc(a, b, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

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
