package autopost

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuildTableMatchesMap runs random inserts, updates and rebuilds on the
// table and on a Go map, and compares them.
func TestGuildTableMatchesMap(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(rand.Uint64(), 4))
	for _, start := range []int{0, 1, 7, 100, 5000} {
		tab := newGuildTable(start)
		ref := map[uint64]uint64{}
		for i := range 20000 {
			// Keys from a small range, so that updates are frequent, and
			// snowflake-like (low 22 bits zero) as well as arbitrary.
			key := uint64(1 + r.IntN(8000))
			if i%2 == 0 {
				key <<= 22
			}
			s := tab.lookup(key)
			_, inRef := ref[key]
			require.Equal(t, inRef, s.key == key, "key %d", key)
			if s.key == key {
				s.val++
			} else {
				tab.insert(s, key, 1)
			}
			ref[key]++
			if i%5000 == 4999 { // a sweep that drops odd values
				tab.rebuild(tab.used, func(v uint64) bool { return v%2 == 0 })
				for k, v := range ref {
					if v%2 != 0 {
						delete(ref, k)
					}
				}
			}
		}
		require.Equal(t, len(ref), tab.used)
		for k, v := range ref {
			s := tab.lookup(k)
			require.Equal(t, k, s.key)
			require.Equal(t, v, s.val)
		}
		assert.LessOrEqual(t, tab.used*4, len(tab.slots)*3, "at most three quarters full")
	}
}

func TestParseSnowflake(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1", "41771983423143937", "18446744073709551615", "00012"} {
		v, ok := parseSnowflake(s)
		want, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		assert.True(t, ok, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"", "0", "-1", "+1", "18446744073709551616", "99999999999999999999", "1a", " 1", "123456789012345678901"} {
		_, ok := parseSnowflake(s)
		assert.False(t, ok, "%q", s)
	}
}

func FuzzParseSnowflake(f *testing.F) {
	for _, s := range []string{"1", "0", "18446744073709551615", "18446744073709551616", "", "-5", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseSnowflake(s)
		want, err := strconv.ParseUint(s, 10, 64)
		wantOK := err == nil && want != 0 && s[0] >= '0' && s[0] <= '9'
		if ok != wantOK || (ok && v != want) {
			t.Fatalf("parseSnowflake(%q) = %d, %v; strconv says %d, %v", s, v, ok, want, err)
		}
	})
}

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
		sh := newShard(newTally(), 0, 1)
		sh.applyReady(info)
	})
}
