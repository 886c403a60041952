package autopost

import (
	"sync"
	"sync/atomic"
)

// A guild's map value packs its state (low bits) with the sequence number of
// the event that set it: one uint64 per guild.
const (
	stateAvailable   uint64 = 0 // counted
	stateUnavailable uint64 = 1 // in an outage: still counted
	stateRemoved     uint64 = 2 // the bot left: a tombstone, not counted
	stateBits               = 2
	stateMask               = 1<<stateBits - 1
)

func pack(seq int64, state uint64) uint64 { return uint64(seq)<<stateBits | state }
func seqOf(v uint64) int64                { return int64(v >> stateBits) }

// Tombstones of removed guilds keep a late GUILD_CREATE from bringing a guild
// back; a sweep drops those tombstoneLag sequence numbers old, when they
// outnumber a quarter of the live guilds (amortised O(1) per removal).
const (
	tombstoneLag = 1 << 14
	minSweep     = 1024
)

// tally holds what a Counter's shards share. Its zero value is ready to use.
type tally struct {
	attached  atomic.Int64
	shardHint atomic.Int64 // largest shard count the sessions announced
	botID     atomic.Pointer[string]

	// changed is closed, then forgotten, on each change: a broadcast. It is
	// made only when someone waits, so guild events never allocate.
	changed atomic.Pointer[chan struct{}]
}

// changedCh returns the channel the next wake closes.
func (t *tally) changedCh() <-chan struct{} {
	for {
		if p := t.changed.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if t.changed.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

func (t *tally) wake() {
	if t.changed.Load() == nil {
		return
	}
	if p := t.changed.Swap(nil); p != nil {
		close(*p)
	}
}

func (t *tally) hintShards(n int) {
	for {
		cur := t.shardHint.Load()
		if int64(n) <= cur || t.shardHint.CompareAndSwap(cur, int64(n)) {
			return
		}
	}
}

// pending is a guild event that overtook its session's READY.
type pending struct {
	seq   int64
	id    uint64
	state uint64
}

// shard counts the guilds of one gateway shard (one discordgo session),
// whatever order its handlers run in: an event older than its guild's last is
// dropped, and one of a session not yet READY waits in early until it is.
type shard struct {
	t *tally

	mu          sync.Mutex
	id, count   int // shard pair, from the session, then from READY
	ready       bool
	detached    bool
	session     string            // session of the applied READY
	prevSession string            // the one before: its late events are dropped
	guilds      map[uint64]uint64 // guild id -> pack(seq, state)
	servers     int               // guilds counted: available or in an outage
	unavailable int
	tombs       int
	sweepAt     int
	maxSeq      int64
	early       []pending
	earlySess   string
}

func newShard(t *tally, id, count int) *shard {
	return &shard{t: t, id: id, count: count, guilds: map[uint64]uint64{}}
}

// guildEvent applies a GUILD_CREATE or GUILD_DELETE setting guild id to state;
// an unknown session is "", an unknown seq <= 0 (then the newest).
func (sh *shard) guildEvent(session string, seq int64, id uint64, state uint64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.detached {
		return
	}
	if session == "" && sh.ready {
		session = sh.session
	}
	if !sh.ready || session != sh.session {
		if sh.ready && session == sh.prevSession {
			return // a straggler of the session before the current one
		}
		if session != sh.earlySess {
			sh.early, sh.earlySess = sh.early[:0], session
		}
		sh.early = append(sh.early, pending{seq: seq, id: id, state: state})
		return
	}
	sh.applyLocked(seq, id, state)
}

// applyLocked sets guild id to state unless a newer event already touched it.
// The caller holds sh.mu.
func (sh *shard) applyLocked(seq int64, id uint64, state uint64) {
	if seq <= 0 {
		seq = sh.maxSeq + 1
	}
	sh.maxSeq = max(sh.maxSeq, seq)
	old, known := sh.guilds[id]
	if known && seqOf(old) >= seq {
		return
	}
	sh.guilds[id] = pack(seq, state)
	oldState := stateRemoved // an unknown guild counts as removed, without a tombstone
	if known {
		oldState = old & stateMask
	}
	sh.tombs += b2i(state == stateRemoved) - b2i(known && oldState == stateRemoved)
	dServers := b2i(state != stateRemoved) - b2i(oldState != stateRemoved)
	dUnavailable := b2i(state == stateUnavailable) - b2i(oldState == stateUnavailable)
	sh.servers += dServers
	sh.unavailable += dUnavailable
	if sh.ready && (dServers != 0 || dUnavailable != 0) {
		sh.t.wake() // READY's replay wakes once, after it
	}
	if sh.tombs > sh.sweepAt {
		sh.sweepLocked()
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sweepLocked drops the tombstones no late event can need any more, into a
// new map: a Go map never shrinks.
func (sh *shard) sweepLocked() {
	horizon := sh.maxSeq - tombstoneLag
	kept := make(map[uint64]uint64, len(sh.guilds))
	for id, v := range sh.guilds {
		if v&stateMask != stateRemoved || seqOf(v) > horizon {
			kept[id] = v
		}
	}
	sh.tombs -= len(sh.guilds) - len(kept)
	sh.guilds = kept
	sh.sweepAt = max(minSweep, sh.servers/4, 2*sh.tombs)
}

// readyGuild is a guild listed in READY, copied out of the event.
type readyGuild struct {
	id          uint64
	unavailable bool
}

// readyInfo is what the shard needs of a READY.
type readyInfo struct {
	session string
	seq     int64
	botID   string
	shard   *[2]int
	guilds  []readyGuild
}

// applyReady replaces the shard's guild set with the READY's and replays the
// events of that session that came first.
func (sh *shard) applyReady(r readyInfo) {
	seq := max(r.seq, 1)
	m, servers, unavailable := readyGuilds(r.guilds, seq)

	sh.mu.Lock()
	if sh.detached || (sh.ready && r.session != "" && (r.session == sh.session || r.session == sh.prevSession)) {
		sh.mu.Unlock()
		return // a duplicate READY, or one of an older session
	}
	sh.guilds, sh.servers, sh.unavailable, sh.tombs, sh.maxSeq = m, servers, unavailable, 0, seq
	sh.sweepAt = max(minSweep, servers/4)
	sh.prevSession, sh.session = sh.session, r.session
	if r.shard != nil && r.shard[1] > 0 {
		sh.id, sh.count = r.shard[0], r.shard[1]
	}
	sh.replayEarlyLocked(r.session)
	sh.ready = true
	count := sh.count
	sh.mu.Unlock()

	sh.t.hintShards(count)
	if r.botID != "" {
		sh.t.botID.Store(&r.botID)
	}
	sh.t.wake()
}

// readyGuilds builds a shard's guild map from READY's list, every guild at
// seq, and counts it; a guild listed twice keeps its first entry.
func readyGuilds(guilds []readyGuild, seq int64) (m map[uint64]uint64, servers, unavailable int) {
	m = make(map[uint64]uint64, len(guilds))
	for _, g := range guilds {
		if _, dup := m[g.id]; dup {
			continue
		}
		state := stateAvailable
		if g.unavailable {
			state = stateUnavailable
			unavailable++
		}
		m[g.id] = pack(seq, state)
		servers++
	}
	return m, servers, unavailable
}

// replayEarlyLocked applies, then drops, the events of session kept from
// before its READY. The caller holds sh.mu.
func (sh *shard) replayEarlyLocked(session string) {
	if sh.earlySess != session && sh.earlySess != "" {
		return
	}
	for _, e := range sh.early {
		sh.applyLocked(e.seq, e.id, e.state)
	}
	sh.early, sh.earlySess = nil, ""
}

// detach takes the shard out of the totals; later events are ignored.
func (sh *shard) detach() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.detached {
		return
	}
	sh.detached = true
	sh.t.attached.Add(-1)
	sh.guilds, sh.early = nil, nil
	sh.servers, sh.unavailable = 0, 0
	sh.t.wake()
}

// stats returns the shard's id, counts and whether it has its READY.
func (sh *shard) stats() (id, servers, unavailable int, ready bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.id, sh.servers, sh.unavailable, sh.ready
}
