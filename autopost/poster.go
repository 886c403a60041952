package autopost

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/topgg"
)

// Errors of Run and Start, for errors.Is.
var (
	// ErrRunning means the Poster is already running.
	ErrRunning = errors.New("autopost: already running")
	// ErrNoSessions means no session is attached, so there is nothing to count.
	ErrNoSessions = errors.New("autopost: no session attached")
)

// Poster counts a bot's guilds from its discordgo sessions and posts the
// counts to Top.gg. Make it with [New], [Poster.Attach] the sessions before they
// open, then [Poster.Run] it (or [Poster.Start] and [Poster.Stop]).
//
// All methods are safe for concurrent use. The counting handlers take a
// per-shard lock for one map update and never block on the network.
type Poster struct {
	client *topgg.Client
	cfg    Config
	log    *slog.Logger
	t      *tally

	mu       sync.Mutex
	shards   []*shard
	sessions map[*discordgo.Session]*shard

	running atomic.Bool
	life    sync.Mutex
	cancel  func()
	done    chan struct{}
}

// New returns a Poster that posts with client. It fails only on a nil client
// or an invalid Config (a negative duration or ShardCount, an unknown mode,
// MaxBackfill over 100), the latter with a *[ConfigError].
func New(client *topgg.Client, cfg Config) (*Poster, error) {
	if client == nil {
		return nil, errors.New("autopost: nil *topgg.Client")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Poster{
		client:   client,
		cfg:      cfg,
		log:      cfg.Logger.With("component", "autopost"),
		t:        newTally(),
		sessions: make(map[*discordgo.Session]*shard),
	}, nil
}

// Attach makes the Poster count the guilds of the given sessions, one per
// shard. Call it before the sessions open, or their READY is missed and they
// never count as ready. A session already attached is skipped.
//
// The shard of a session is its ShardID/ShardCount pair (or Identify.Shard),
// as discordgo identifies with it; READY confirms it.
//
// The returned function detaches these sessions: it removes the handlers and
// takes their guilds out of the counts, so the following posts carry the
// counts of the shards still attached (in v1 a partial total, with a
// warning), and nothing at all once no attached shard is ready. It may be
// called more than once.
func (p *Poster) Attach(sessions ...*discordgo.Session) (detach func()) {
	var added []*shard
	var attached []*discordgo.Session
	p.mu.Lock()
	for _, s := range sessions {
		if s == nil {
			continue
		}
		if _, dup := p.sessions[s]; dup {
			p.log.Warn("session attached twice; ignoring the second time", "shard", s.ShardID)
			continue
		}
		id, count := shardPair(s)
		sh := newShard(p.t, id, count)
		p.sessions[s] = sh
		p.shards = append(p.shards, sh)
		p.t.attached.Add(1)
		p.t.hintShards(count)
		added = append(added, sh)
		attached = append(attached, s)
	}
	p.mu.Unlock()
	// Handlers are added outside p.mu: discordgo's handler lock may be held
	// by a running synchronous handler.
	removers := make([]func(), len(added))
	for i, s := range attached {
		removers[i] = s.AddHandler(added[i].onEvent)
	}

	return sync.OnceFunc(func() {
		for _, remove := range removers {
			remove()
		}
		p.mu.Lock()
		for _, s := range attached {
			delete(p.sessions, s)
		}
		p.shards = slices.DeleteFunc(p.shards, func(sh *shard) bool { return slices.Contains(added, sh) })
		p.mu.Unlock()
		for _, sh := range added {
			sh.detach()
		}
	})
}

// shardPair returns the shard a session identifies as, the way discordgo
// builds its IDENTIFY.
func shardPair(s *discordgo.Session) (id, count int) {
	if s.ShardCount > 1 {
		return s.ShardID, s.ShardCount
	}
	if sh := s.Identify.Shard; sh != nil && sh[1] > 0 {
		return sh[0], sh[1]
	}
	return 0, 1
}

// Counts is a snapshot of what the Poster counted.
type Counts struct {
	// Servers is the number of guilds of the attached shards, those in an
	// outage included.
	Servers int
	// Unavailable is how many of Servers are in an outage now.
	Unavailable int
	// Shards is the bot's total shard count, as posted in shard_count.
	Shards int
	// PerShard holds the servers of each shard by shard id; shards not
	// attached to this Poster show 0.
	PerShard []int
	// Ready reports whether every attached shard has received its READY.
	Ready bool
}

// Counts returns the current counts. Servers is the sum of PerShard, read
// shard by shard: an event handled meanwhile may show in one and not in the
// next.
func (p *Poster) Counts() Counts {
	p.mu.Lock()
	shards := slices.Clone(p.shards)
	p.mu.Unlock()
	c := Counts{Shards: p.shardTotal(), Ready: len(shards) > 0}
	c.PerShard = make([]int, c.Shards)
	for _, sh := range shards {
		id, servers, unavailable, ready := sh.stats()
		if id < 0 {
			continue
		}
		if id >= len(c.PerShard) {
			c.PerShard = append(c.PerShard, make([]int, id+1-len(c.PerShard))...)
		}
		c.PerShard[id] += servers
		c.Servers += servers
		c.Unavailable += unavailable
		c.Ready = c.Ready && ready
	}
	return c
}

// shardTotal is the shard_count to post: the configured one, else the largest
// shard count the sessions announced, or the number attached if larger.
func (p *Poster) shardTotal() int {
	if p.cfg.ShardCount > 0 {
		return p.cfg.ShardCount
	}
	return int(max(p.t.shardHint.Load(), p.t.attached.Load(), 1))
}

// snapshot is what one post sends.
type snapshot struct {
	servers, shards int
	// v0 only:
	perShard []int // by shard id
	local    bool  // every shard of the bot is attached here, once
	ids      []int // attached shard ids, when not local
	botID    string
}

func (a snapshot) same(b snapshot) bool {
	return a.servers == b.servers && a.shards == b.shards && slices.Equal(a.perShard, b.perShard)
}

// snapshotV1 reads the running totals: O(1) whatever the number of guilds
// and shards.
func (p *Poster) snapshotV1() snapshot {
	return snapshot{servers: int(p.t.servers.Load()), shards: p.shardTotal()}
}

// snapshotV0 reads every shard once, for the per-shard list of v0 stats and
// the ids of the ready shards.
func (p *Poster) snapshotV0() snapshot {
	snap := snapshot{shards: p.shardTotal()}
	if id := p.t.botID.Load(); id != nil {
		snap.botID = *id
	}
	snap.perShard = make([]int, snap.shards)
	seen := make([]int, snap.shards) // ready sessions per shard id
	p.mu.Lock()
	for _, sh := range p.shards {
		id, servers, _, ready := sh.stats()
		if id < 0 {
			continue
		}
		if id >= len(snap.perShard) {
			snap.perShard = append(snap.perShard, make([]int, id+1-len(snap.perShard))...)
		}
		snap.perShard[id] += servers
		snap.servers += servers
		if ready && id < len(seen) {
			seen[id]++
			snap.ids = append(snap.ids, id)
		}
	}
	p.mu.Unlock()
	snap.local = !slices.ContainsFunc(seen, func(n int) bool { return n != 1 })
	slices.Sort(snap.ids)
	snap.ids = slices.Compact(snap.ids)
	return snap
}
