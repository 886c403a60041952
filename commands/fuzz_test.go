package commands_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/topgg"
)

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
