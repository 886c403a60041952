package autopost

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Counter's counting. The TestShard tests feed the shard's discordgo
// handler events made the way discordgo makes them (raw payload plus decoded
// struct), in shuffled orders, and compare the counts with a model that
// applies them in order.

type evKind int

const (
	evCreate evKind = iota // GUILD_CREATE (join, lazy load or return)
	evOutage               // GUILD_DELETE unavailable
	evRemove               // GUILD_DELETE
)

// step is one guild event of a timeline, in wire order.
type step struct {
	kind evKind
	id   uint64
}

// timeline is one gateway session: READY then guild events.
type timeline struct {
	session string
	ready   []uint64 // guild stubs in READY (all unavailable, as on Discord)
	steps   []step
}

// model applies a timeline in wire order: the counts the shard must end with.
func (tl timeline) model() (servers, unavailable int) {
	set := map[uint64]bool{} // id -> unavailable
	for _, id := range tl.ready {
		set[id] = true
	}
	for _, s := range tl.steps {
		switch s.kind {
		case evCreate:
			set[s.id] = false
		case evOutage:
			set[s.id] = true
		case evRemove:
			delete(set, s.id)
		}
	}
	for _, un := range set {
		if un {
			unavailable++
		}
	}
	return len(set), unavailable
}

// events makes the discordgo events of the timeline: READY has sequence 1,
// the steps follow.
func (tl timeline) events(t testing.TB) []*discordgo.Event {
	guilds := make([]map[string]any, len(tl.ready))
	for i, id := range tl.ready {
		guilds[i] = map[string]any{"id": strconv.FormatUint(id, 10), "unavailable": true}
	}
	evs := []*discordgo.Event{makeEvent(t, "READY", 1, map[string]any{
		"v": 10, "session_id": tl.session, "user": map[string]any{"id": "1100000000000000001", "username": "bot"},
		"shard": []int{0, 1}, "guilds": guilds,
	})}
	for i, s := range tl.steps {
		evs = append(evs, guildEvent(t, int64(i+2), s))
	}
	return evs
}

func guildEvent(t testing.TB, seq int64, s step) *discordgo.Event {
	id := strconv.FormatUint(s.id, 10)
	switch s.kind {
	case evCreate:
		return makeEvent(t, "GUILD_CREATE", seq, map[string]any{"id": id, "name": "g", "unavailable": false, "member_count": 2})
	case evOutage:
		return makeEvent(t, "GUILD_DELETE", seq, map[string]any{"id": id, "unavailable": true})
	default:
		return makeEvent(t, "GUILD_DELETE", seq, map[string]any{"id": id})
	}
}

// makeEvent builds an event as discordgo's onEvent does: RawData and Struct.
func makeEvent(t testing.TB, typ string, seq int64, d any) *discordgo.Event {
	raw, err := json.Marshal(d)
	require.NoError(t, err)
	e := &discordgo.Event{Operation: 0, Sequence: seq, Type: typ, RawData: raw}
	switch typ {
	case "READY":
		e.Struct = &discordgo.Ready{}
	case "GUILD_CREATE":
		e.Struct = &discordgo.GuildCreate{}
	case "GUILD_DELETE":
		e.Struct = &discordgo.GuildDelete{}
	}
	require.NoError(t, json.Unmarshal(raw, e.Struct))
	return e
}

// randomTimeline makes a plausible session: READY with n stubs, their lazy
// GUILD_CREATEs, then ops random joins, removals, outages and returns.
//
// gocyclo 15: one case per kind of random step.
func randomTimeline(r *rand.Rand, session string, n, ops int, nextID *uint64) timeline {
	tl := timeline{session: session}
	state := map[uint64]bool{} // id -> unavailable
	var ids []uint64
	newID := func() uint64 { *nextID++; return *nextID << 22 }
	for range n {
		id := newID()
		tl.ready = append(tl.ready, id)
		state[id] = true
		ids = append(ids, id)
	}
	for _, id := range tl.ready {
		tl.steps = append(tl.steps, step{evCreate, id})
		state[id] = false
	}
	for range ops {
		var id uint64
		if len(ids) > 0 {
			id = ids[r.IntN(len(ids))]
		}
		un, present := state[id]
		switch k := r.IntN(10); {
		case len(ids) == 0 || k < 3: // join
			id = newID()
			ids = append(ids, id)
			state[id] = false
			tl.steps = append(tl.steps, step{evCreate, id})
		case !present && k < 5: // rejoin a guild the bot left
			state[id] = false
			tl.steps = append(tl.steps, step{evCreate, id})
		case present && k < 6:
			delete(state, id)
			tl.steps = append(tl.steps, step{evRemove, id})
		case present && !un:
			state[id] = true
			tl.steps = append(tl.steps, step{evOutage, id})
		case present && un:
			state[id] = false
			tl.steps = append(tl.steps, step{evCreate, id})
		}
	}
	return tl
}

// testSession is a discordgo session whose State has taken the READY of
// session, as discordgo's reader goroutine does before any handler runs.
func testSession(t testing.TB, session string) *discordgo.Session {
	s, err := discordgo.New("Bot test-token")
	require.NoError(t, err)
	s.State.Ready.SessionID = session
	return s
}

func TestShardInOrder(t *testing.T) {
	t.Parallel()
	const a, b, c, d, e, f, g = 1 << 22, 2 << 22, 3 << 22, 4 << 22, 5 << 22, 6 << 22, 7 << 22
	tl := timeline{
		session: "s1",
		ready:   []uint64{a, b, c, d, e},
		steps: []step{
			{evCreate, a}, {evCreate, b}, {evCreate, c}, {evCreate, d}, {evCreate, e}, // lazy load: no join
			{evCreate, f},                // join
			{evRemove, b},                // removal
			{evOutage, c}, {evCreate, c}, // outage and return: counted once
			{evOutage, d},                // outage: still counted
			{evCreate, g}, {evRemove, g}, // join then leave
			{evRemove, e}, {evCreate, e}, // leave then join again
			{evRemove, 99 << 22}, // removal of an unknown guild
			{evCreate, a},        // a repeated GUILD_CREATE
		},
	}
	servers, unavailable := tl.model()
	require.Equal(t, 5, servers) // a c d e f
	require.Equal(t, 1, unavailable)

	tal := &tally{}
	sh := newShard(tal, 0, 1)
	s := testSession(t, "s1")
	for _, ev := range tl.events(t) {
		sh.onEvent(s, ev)
	}
	_, gotServers, gotUnavailable, ready := sh.stats()
	assert.True(t, ready)
	assert.Equal(t, servers, gotServers)
	assert.Equal(t, unavailable, gotUnavailable)
	assert.Equal(t, "1100000000000000001", *tal.botID.Load())
}

// seeded is a random source with a fresh seed, logged so that a failure can
// be replayed.
func seeded(t *testing.T, stream uint64) *rand.Rand {
	t.Helper()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, stream))
}

func TestShardShuffled(t *testing.T) {
	t.Parallel()
	r := seeded(t, 1)
	for round := range 200 {
		var next uint64
		tl := randomTimeline(r, "s1", r.IntN(20), r.IntN(60), &next)
		wantServers, wantUnavailable := tl.model()
		sh := newShard(&tally{}, 0, 1)
		playShuffled(t, r, sh, testSession(t, "s1"), tl)
		requireCounts(t, sh, wantServers, wantUnavailable, round)
	}
}

// playShuffled hands the events of tl to sh through s, in a random order.
func playShuffled(t *testing.T, r *rand.Rand, sh *shard, s *discordgo.Session, tl timeline) {
	evs := tl.events(t)
	r.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	for _, ev := range evs {
		sh.onEvent(s, ev)
	}
}

// requireCounts requires that sh is ready with these counts.
func requireCounts(t *testing.T, sh *shard, servers, unavailable, round int) {
	t.Helper()
	_, gotServers, gotUnavailable, ready := sh.stats()
	require.True(t, ready, "round %d: ready", round)
	require.Equal(t, servers, gotServers, "round %d: servers", round)
	require.Equal(t, unavailable, gotUnavailable, "round %d: unavailable", round)
}

// TestShardReconnectShuffled: a new session's READY replaces the guild set,
// even when some of the new session's events are handled before it.
func TestShardReconnectShuffled(t *testing.T) {
	t.Parallel()
	r := seeded(t, 2)
	for round := range 200 {
		var next uint64
		first := randomTimeline(r, "s1", 1+r.IntN(15), r.IntN(40), &next)
		// The second session lists other guilds: some left, some joined
		// while the bot was disconnected.
		second := randomTimeline(r, "s2", 1+r.IntN(15), r.IntN(40), &next)
		wantServers, wantUnavailable := second.model()

		sh := newShard(&tally{}, 0, 1)
		s := testSession(t, "s1")
		playShuffled(t, r, sh, s, first)
		s.State.Ready.SessionID = "s2"
		playShuffled(t, r, sh, s, second)
		requireCounts(t, sh, wantServers, wantUnavailable, round) // ready after the new session's READY
	}
}

// TestShardConcurrent runs every handler in its own goroutine, as discordgo
// does without SyncEvents, on several shards sharing one tally.
func TestShardConcurrent(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(rand.Uint64(), 3))
	tal := &tally{}
	var next uint64
	want := 0
	var wg sync.WaitGroup
	var shards []*shard
	for i := range 4 {
		tl := randomTimeline(r, fmt.Sprint("s", i), 50, 200, &next)
		n, _ := tl.model()
		want += n
		sh := newShard(tal, i, 4)
		shards = append(shards, sh)
		s := testSession(t, tl.session)
		for _, ev := range tl.events(t) {
			wg.Go(func() { sh.onEvent(s, ev) })
		}
	}
	wg.Wait()
	sum, ready := 0, 0
	for _, sh := range shards {
		_, n, _, r := sh.stats()
		sum += n
		if r {
			ready++
		}
	}
	assert.Equal(t, want, sum)
	assert.Equal(t, 4, ready)
}

// TestShardReadyReadsRawPayload: READY is read from its raw payload, not from
// the decoded struct that discordgo's State changes in place.
func TestShardReadyReadsRawPayload(t *testing.T) {
	t.Parallel()
	tl := timeline{session: "s1", ready: []uint64{1 << 22, 2 << 22, 3 << 22}}
	ev := tl.events(t)[0]
	// What State does to the READY guild slice on GUILD_DELETE of the first.
	r := ev.Struct.(*discordgo.Ready)
	r.Guilds = append(r.Guilds[:0], r.Guilds[1:]...)
	sh := newShard(&tally{}, 0, 1)
	sh.onEvent(testSession(t, "s1"), ev)
	_, servers, unavailable, _ := sh.stats()
	assert.Equal(t, 3, servers)
	assert.Equal(t, 3, unavailable)
}

func TestShardStaleSessionAndDuplicateReady(t *testing.T) {
	t.Parallel()
	tal := &tally{}
	sh := newShard(tal, 0, 1)
	s := testSession(t, "s1")
	sh.onEvent(s, timeline{session: "s1", ready: []uint64{1 << 22}}.events(t)[0])
	s.State.Ready.SessionID = "s2"
	sh.onEvent(s, timeline{session: "s2", ready: []uint64{2 << 22, 3 << 22}}.events(t)[0])
	// A late event of s1 and a repeated READY of s1 or s2 change nothing.
	sh.guildEvent("s1", 50, 4<<22, stateAvailable)
	sh.onEvent(s, timeline{session: "s1", ready: []uint64{5 << 22}}.events(t)[0])
	sh.onEvent(s, timeline{session: "s2", ready: []uint64{6 << 22}}.events(t)[0])
	_, servers, _, ready := sh.stats()
	assert.Equal(t, 2, servers)
	assert.True(t, ready)
}

// TestShardTombstoneSweep: tombstones of removed guilds are swept once no
// late event can need them, so memory stays bounded, and until then a late
// GUILD_CREATE older than the removal is ignored.
func TestShardTombstoneSweep(t *testing.T) {
	t.Parallel()
	tal := &tally{}
	sh := newShard(tal, 0, 1)
	sh.onEvent(testSession(t, "s1"), timeline{session: "s1"}.events(t)[0])
	seq := int64(1)
	const pairs = 50000
	for i := range uint64(pairs) {
		seq++
		sh.guildEvent("s1", seq, (i+1)<<22, stateAvailable)
		seq++
		sh.guildEvent("s1", seq, (i+1)<<22, stateRemoved)
	}
	_, servers, _, _ := sh.stats()
	require.Equal(t, 0, servers)
	sh.mu.Lock()
	kept, tombs := len(sh.guilds), sh.tombs
	sh.mu.Unlock()
	assert.Equal(t, kept, tombs)
	assert.Less(t, kept, pairs/2, "tombstones are swept")

	// The last removal's tombstone is still there: an older GUILD_CREATE of
	// that guild, handled late, does not bring it back.
	sh.guildEvent("s1", seq-1, pairs<<22, stateAvailable)
	_, servers, _, _ = sh.stats()
	assert.Equal(t, 0, servers)
}

func TestShardDetach(t *testing.T) {
	t.Parallel()
	tal := &tally{}
	tal.attached.Add(1)
	sh := newShard(tal, 0, 1)
	s := testSession(t, "s1")
	sh.onEvent(s, timeline{session: "s1", ready: []uint64{1 << 22, 2 << 22}}.events(t)[0])
	_, servers, _, _ := sh.stats()
	require.Equal(t, 2, servers)
	sh.detach()
	sh.onEvent(s, guildEvent(t, 5, step{evCreate, 9 << 22}))
	_, servers, _, _ = sh.stats()
	assert.Equal(t, 0, servers, "a detached shard counts nothing")
	assert.Equal(t, int64(0), tal.attached.Load())
	assert.Equal(t, int64(0), tal.attached.Load())
}

// TestCounterCounts checks the per-shard list and the missing shards.
func TestCounterCounts(t *testing.T) {
	t.Parallel()
	// addShard attaches a shard with n guilds, ready if session is not "".
	addShard := func(c *Counter, id, n int, session string) {
		sh := newShard(&c.t, id, 2)
		if session != "" {
			r := readyOf(n, uint64(100*len(c.shards)))
			r.session, r.shard = session, &[2]int{id, 2}
			sh.applyReady(r)
		}
		c.shards = append(c.shards, sh)
		c.t.attached.Add(1)
	}

	c := NewCounter(2)
	addShard(c, 1, 4, "a")
	addShard(c, 0, 0, "") // attached, no READY yet
	counts, err := c.Counts(t.Context())
	require.NoError(t, err)
	assert.Equal(t, Counts{Servers: 4, Shards: 2, PerShard: []int{0, 4}, Missing: []int{0}}, counts)
	assert.False(t, counts.Complete())

	c = NewCounter(2)
	addShard(c, 1, 4, "a")
	addShard(c, 0, 3, "b")
	counts, err = c.Counts(t.Context())
	require.NoError(t, err)
	assert.Equal(t, Counts{Servers: 7, Shards: 2, PerShard: []int{3, 4}}, counts)
	assert.True(t, counts.Complete())
	assert.Equal(t, []ShardStats{{ID: 0, Servers: 3, Ready: true}, {ID: 1, Servers: 4, Ready: true}}, c.AppendShards(nil))

	// A shard id beyond the count (READY said so) widens the list.
	addShard(c, 3, 1, "d")
	counts, err = c.Counts(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []int{3, 4, 0, 1}, counts.PerShard)
	assert.Equal(t, []int{2}, counts.Missing)
}

// TestAppendShardsAllocatesNothing: the snapshot a fleet process publishes
// costs no allocation with a reused buffer.
func TestAppendShardsAllocatesNothing(t *testing.T) {
	c := benchCounter(16, 10)
	buf := make([]ShardStats, 0, 16)
	allocs := testing.AllocsPerRun(100, func() { buf = c.AppendShards(buf[:0]) })
	assert.Zero(t, allocs)
	assert.Len(t, buf, 16)
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
		sh := newShard(&tally{}, 0, 1)
		sh.applyReady(info)
	})
}
