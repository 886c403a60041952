package autopost

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// Run with: go test -run '^$' -bench . -benchmem ./autopost/

// benchShard returns a ready shard of session "s1" with n available guilds
// (ids snowBase|(i+1)<<22) and a session whose State is on "s1".
func benchShard(b *testing.B, n int) (*shard, *discordgo.Session) {
	b.Helper()
	sh := newShard(&tally{}, 0, 1)
	sh.applyReady(readyOf(n, 0))
	s, err := discordgo.New("Bot bench")
	if err != nil {
		b.Fatal(err)
	}
	s.State.Ready.SessionID = "s1"
	return sh, s
}

// snowBase makes the bench ids 19 digits long, as guild ids created since
// 2022 are.
const snowBase = 1 << 60

func readyOf(n int, first uint64) readyInfo {
	r := readyInfo{session: "s1", seq: 1, guilds: make([]readyGuild, n)}
	for i := range r.guilds {
		r.guilds[i] = readyGuild{id: snowBase | (first+uint64(i)+1)<<22}
	}
	return r
}

func createEvent(id uint64) *discordgo.Event {
	return &discordgo.Event{Type: "GUILD_CREATE", Struct: &discordgo.GuildCreate{Guild: &discordgo.Guild{
		ID: strconv.FormatUint(id, 10), Name: "g", MemberCount: 2}}}
}

func deleteEvent(id uint64, unavailable bool) *discordgo.Event {
	return &discordgo.Event{Type: "GUILD_DELETE", Struct: &discordgo.GuildDelete{Guild: &discordgo.Guild{
		ID: strconv.FormatUint(id, 10), Unavailable: unavailable}}}
}

// BenchmarkGuildEvent measures one GUILD_CREATE or GUILD_DELETE through the
// discordgo handler (State lock, id parse, shard lock, map update, counts),
// on a shard of 10,000 guilds, beside a floor (a bare handler; compare it
// with create/lazy). Goal: under 100 ns, 0 allocs. Each op is one event. As
// in discordgo, where the handler runs right after the event was decoded,
// the event is hot in the cache: one event value per kind is reused with the
// next guild's id.
//
//	go test -run '^$' -bench GuildEvent -benchmem -count 5 ./autopost/
//
// gocyclo 17: the floor and every event kind are sub-benchmarks of one
// setup, so that they run on the same shard and compare in one run.
func BenchmarkGuildEvent(b *testing.B) {
	const n = 10_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.FormatUint(snowBase|uint64(i+1)<<22, 10)
	}
	// run feeds the events of kinds in turn, each for the next guild.
	run := func(b *testing.B, kinds ...*discordgo.Event) *shard {
		sh, s := benchShard(b, n)
		guild := func(e *discordgo.Event) *discordgo.Guild {
			if gc, ok := e.Struct.(*discordgo.GuildCreate); ok {
				return gc.Guild
			}
			return e.Struct.(*discordgo.GuildDelete).Guild
		}
		b.ReportAllocs()
		seq := int64(1)
		for i := 0; b.Loop(); i++ {
			seq++
			e := kinds[i%len(kinds)]
			guild(e).ID = ids[(i/len(kinds))%n]
			e.Sequence = seq
			sh.onEvent(s, e)
		}
		return sh
	}
	b.Run("create/lazy", func(b *testing.B) {
		// The GUILD_CREATE that follows READY, or a repeated one: no change.
		run(b, createEvent(0))
	})
	b.Run("delete/outage+create/return", func(b *testing.B) {
		sh := run(b, deleteEvent(0, true), createEvent(0))
		if _, got, _, _ := sh.stats(); got != n {
			b.Fatalf("servers %d, want %d", got, n)
		}
	})
	b.Run("delete/remove+create/join", func(b *testing.B) {
		run(b, deleteEvent(0, false), createEvent(0))
	})
	b.Run("floor", func(b *testing.B) {
		// The floor of create/lazy: what a bare handler counting guilds does
		// with the same event (type switch, strconv.ParseUint, a mutex, a
		// map[uint64]uint64 lookup and store of the event's sequence).
		var mu sync.Mutex
		guilds := make(map[uint64]uint64, n)
		for i := range n {
			guilds[snowBase|uint64(i+1)<<22] = 1
		}
		count := n
		handler := func(_ *discordgo.Session, e *discordgo.Event) {
			if e.Type != "GUILD_CREATE" {
				return
			}
			gc, ok := e.Struct.(*discordgo.GuildCreate)
			if !ok {
				return
			}
			id, err := strconv.ParseUint(gc.ID, 10, 64)
			if err != nil {
				return
			}
			mu.Lock()
			if old, known := guilds[id]; !known || old < uint64(e.Sequence) {
				if !known {
					count++
				}
				guilds[id] = uint64(e.Sequence)
			}
			mu.Unlock()
		}
		e := createEvent(0)
		gc := e.Struct.(*discordgo.GuildCreate)
		s, err := discordgo.New("Bot bench")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		seq := int64(1)
		for i := 0; b.Loop(); i++ {
			seq++
			gc.ID, e.Sequence = ids[i%n], seq
			handler(s, e)
		}
		if count != n {
			b.Fatalf("count %d, want %d", count, n)
		}
	})
	b.Run("stale", func(b *testing.B) {
		// An event older than the guild's last one (handled out of order).
		sh, s := benchShard(b, n)
		e := createEvent(snowBase | 1<<22)
		e.Sequence = 1
		b.ReportAllocs()
		for b.Loop() {
			sh.onEvent(s, e)
		}
	})
	b.Run("other-event-type", func(b *testing.B) {
		// The handler sees every dispatch; others cost a string switch.
		sh, s := benchShard(b, n)
		e := &discordgo.Event{Type: "MESSAGE_CREATE", Sequence: 5}
		b.ReportAllocs()
		for b.Loop() {
			sh.onEvent(s, e)
		}
	})
}

// benchCounter returns a Counter of shards ready shards with perShard
// guilds each.
func benchCounter(shards, perShard int) *Counter {
	c := NewCounter(shards)
	for i := range shards {
		sh := newShard(&c.t, i, shards)
		r := readyOf(perShard, uint64(i*perShard))
		r.session = fmt.Sprint("s", i)
		r.shard = &[2]int{i, shards}
		sh.applyReady(r)
		c.shards = append(c.shards, sh)
		c.t.attached.Add(1)
	}
	return c
}

// BenchmarkBuildPost measures reading the counts of one post (Counter.Counts:
// the total, the per-shard list, the missing shards) and building the v1
// payload, for 10 guilds on 1 shard and for 1,000,000 guilds on 1,000
// shards: its cost grows with the shards, not the guilds.
func BenchmarkBuildPost(b *testing.B) {
	for _, tc := range []struct{ shards, perShard int }{{1, 10}, {1000, 1000}} {
		c := benchCounter(tc.shards, tc.perShard)
		b.Run(fmt.Sprintf("guilds=%d/shards=%d", tc.shards*tc.perShard, tc.shards), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				counts, _ := c.Counts(b.Context())
				if m := metrics(counts); *m.ServerCount != tc.shards*tc.perShard || !counts.Complete() {
					b.Fatalf("servers %d complete %v", *m.ServerCount, counts.Complete())
				}
			}
		})
	}
}

// BenchmarkAppendShards measures the per-shard snapshot a fleet process
// publishes, into a reused buffer: no allocation.
func BenchmarkAppendShards(b *testing.B) {
	c := benchCounter(64, 1000)
	buf := make([]ShardStats, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = c.AppendShards(buf[:0])
		if len(buf) != 64 {
			b.Fatal(len(buf))
		}
	}
}

// BenchmarkMemoryPerGuild reports the heap a tracked guild takes: the shard
// map filled from READY (pre-sized) and grown by joins.
func BenchmarkMemoryPerGuild(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		for _, how := range []string{"ready", "joins"} {
			b.Run(fmt.Sprintf("%s/guilds=%d", how, n), func(b *testing.B) {
				var perGuild float64
				for b.Loop() {
					r := readyOf(n, 0)
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					sh := newShard(&tally{}, 0, 1)
					if how == "ready" {
						sh.applyReady(r)
					} else {
						sh.applyReady(readyInfo{session: "s1", seq: 1})
						sh.mu.Lock()
						for i, g := range r.guilds {
							sh.applyLocked(int64(i+2), g.id, stateAvailable)
						}
						sh.mu.Unlock()
					}
					runtime.GC()
					runtime.ReadMemStats(&after)
					runtime.KeepAlive(r)
					if _, servers, _, _ := sh.stats(); servers != n {
						b.Fatalf("servers %d", servers)
					}
					runtime.KeepAlive(sh)
					perGuild = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				}
				b.ReportMetric(perGuild, "bytes/guild")
			})
		}
	}
}
