package commands_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
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
