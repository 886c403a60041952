package autopost

import (
	"testing"

	"github.com/bwmarrin/discordgo"
)

// FuzzReadReady: any READY payload decodes without panic, and every guild
// it returns was listed with a valid id.
func FuzzReadReady(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","user":{"id":"1"},"shard":[0,1],"guilds":[{"id":"4194304","unavailable":true}]}`))
	f.Add([]byte(`{"guilds":[{"id":"x"},{"id":"0"},{}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		info, ok := readReady(&discordgo.Event{Type: "READY", Sequence: 1, RawData: raw})
		if !ok {
			return
		}
		for _, g := range info.guilds {
			if g.id == 0 {
				t.Fatal("guild id 0")
			}
		}
		sh := newShard(&tally{}, 0, 1)
		sh.applyReady(info)
	})
}
