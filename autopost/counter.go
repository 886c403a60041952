package autopost

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/topgg"
)

var _ Source = (*Counter)(nil)

// Counter counts a bot's guilds per shard from the gateway events of the
// sessions attached to it; it is a Poster's default [Source]. The zero value
// is NewCounter(0); do not copy it after first use. Safe for concurrent use;
// its event handlers never block on the network.
type Counter struct {
	shardCount int // the bot's total; 0: from the sessions
	t          tally

	mu       sync.Mutex
	shards   []*shard
	sessions map[*discordgo.Session]*shard
}

// NewCounter returns a Counter for a bot of shardCount shards in all, posted
// as shard_count; zero or less takes it from the sessions.
func NewCounter(shardCount int) *Counter {
	return &Counter{shardCount: max(shardCount, 0)}
}

// ShardStats is the state of one attached shard.
type ShardStats struct {
	// ID is the shard id, from the session and confirmed by READY.
	ID int
	// Servers is the number of its guilds, those in an outage included.
	Servers int
	// Unavailable is how many of Servers are in an outage now.
	Unavailable int
	// Ready reports whether the shard has received its READY; until then
	// Servers is 0.
	Ready bool
}

// Attach counts the guilds of sessions, one per shard, not yet opened; all or
// none. Errors: [topgg.ErrNilArgument], [ErrSessionOpen], and one naming a
// session without the GUILDS intent or a shard taken or beyond the count.
// detach is idempotent.
func (c *Counter) Attach(sessions ...*discordgo.Session) (detach func(), err error) {
	for i, s := range sessions {
		switch {
		case s == nil:
			return nil, fmt.Errorf("autopost: sessions[%d]: %w (*discordgo.Session)", i, topgg.ErrNilArgument)
		case s.Identify.Intents&discordgo.IntentsGuilds == 0: // its count would never change
			return nil, fmt.Errorf("%w: sessions[%d] (shard %d)", errNoGuildsIntent, i, s.ShardID)
		}
	}
	added, err := c.register(sessions)
	if err != nil {
		return nil, err
	}
	// Handlers are added outside c.mu (a synchronous handler may hold
	// discordgo's lock), each before its session is checked, so that a racing
	// Open is either seen or has its READY delivered.
	removers := make([]func(), 0, len(sessions))
	detach = sync.OnceFunc(func() {
		for _, remove := range removers {
			remove()
		}
		c.unregister(sessions, added)
	})
	for i, s := range sessions {
		removers = append(removers, s.AddHandler(added[i].onEvent))
		if discord.Opened(s) {
			detach()
			return nil, fmt.Errorf("%w: sessions[%d] (shard %d)", ErrSessionOpen, i, s.ShardID)
		}
	}
	return detach, nil
}

// register adds a shard for each session, or none if one is taken.
func (c *Counter) register(sessions []*discordgo.Session) ([]*shard, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessions == nil {
		c.sessions = make(map[*discordgo.Session]*shard)
	}
	taken := make(map[int]bool, len(c.shards)+len(sessions))
	for _, sh := range c.shards {
		id, _, _, _ := sh.stats()
		taken[id] = true
	}
	added := make([]*shard, len(sessions))
	for i, s := range sessions {
		id, count := shardPair(s)
		_, dup := c.sessions[s]
		switch {
		case dup || taken[id]:
			return nil, fmt.Errorf("%w: sessions[%d] (shard %d)", errAttachedTwice, i, id)
		case c.shardCount > 0 && (id >= c.shardCount || count > c.shardCount):
			return nil, fmt.Errorf("%w: sessions[%d] (shard %d of %d) is beyond the Counter's %d shards",
				errAttachedTwice, i, id, count, c.shardCount)
		}
		taken[id] = true
		added[i] = newShard(&c.t, id, count)
	}
	for i, s := range sessions {
		c.sessions[s] = added[i]
		c.t.hintShards(added[i].count)
	}
	c.shards = append(c.shards, added...)
	c.t.attached.Add(int64(len(added)))
	c.t.wake()
	return added, nil
}

func (c *Counter) unregister(sessions []*discordgo.Session, added []*shard) {
	c.mu.Lock()
	for _, s := range sessions {
		delete(c.sessions, s)
	}
	c.shards = slices.DeleteFunc(c.shards, func(sh *shard) bool { return slices.Contains(added, sh) })
	c.mu.Unlock()
	for _, sh := range added {
		sh.detach()
	}
}

// shardPair returns the shard a session identifies as, as discordgo does.
func shardPair(s *discordgo.Session) (id, count int) {
	if s.ShardCount > 1 {
		return s.ShardID, s.ShardCount
	}
	if sh := s.Identify.Shard; sh != nil && sh[1] > 0 {
		return sh[0], sh[1]
	}
	return 0, 1
}

// AppendShards appends the state of every attached shard to dst, in shard
// id order; it allocates nothing when dst has room.
func (c *Counter) AppendShards(dst []ShardStats) []ShardStats {
	if c == nil {
		return dst
	}
	start := len(dst)
	c.mu.Lock()
	for _, sh := range c.shards {
		id, servers, unavailable, ready := sh.stats()
		dst = append(dst, ShardStats{ID: id, Servers: servers, Unavailable: unavailable, Ready: ready})
	}
	c.mu.Unlock()
	slices.SortFunc(dst[start:], func(a, b ShardStats) int { return a.ID - b.ID })
	return dst
}

// attachedSessions returns the sessions attached now.
func (c *Counter) attachedSessions() []*discordgo.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Keys(c.sessions))
}

// Counts returns the counts of the attached shards: Missing lists those of
// [0, Shards) without a ready session here. It fails only when ctx is done.
func (c *Counter) Counts(ctx context.Context) (Counts, error) {
	if err := ctx.Err(); err != nil {
		return Counts{}, err
	}
	shards := c.AppendShards(nil)
	n := c.shardTotal()
	if len(shards) > 0 {
		n = max(n, shards[len(shards)-1].ID+1)
	}
	out := Counts{Shards: n, PerShard: make([]int, n)}
	ready := make([]bool, n)
	for _, sh := range shards {
		if sh.ID < 0 || !sh.Ready {
			continue
		}
		out.PerShard[sh.ID] += sh.Servers
		out.Servers += sh.Servers
		out.Unavailable += sh.Unavailable
		ready[sh.ID] = true
	}
	for id, r := range ready {
		if !r {
			out.Missing = append(out.Missing, id)
		}
	}
	if id := c.t.botID.Load(); id != nil {
		out.BotID = *id
	}
	return out, nil
}

// Changed returns a channel closed when a shard gets its READY, is attached
// or detached, or its counts change.
func (c *Counter) Changed() <-chan struct{} {
	if c == nil {
		return nil
	}
	return c.t.changedCh()
}

// shardTotal is the shard_count to post.
func (c *Counter) shardTotal() int {
	if c.shardCount > 0 {
		return c.shardCount
	}
	return int(max(c.t.shardHint.Load(), c.t.attached.Load(), 1))
}

// Format prints the Counter by its shard count under every verb (%#v too),
// never its sessions, which hold the bot token.
func (c *Counter) Format(f fmt.State, _ rune) {
	if c == nil {
		fmt.Fprint(f, "autopost.Counter(nil)")
		return
	}
	c.mu.Lock()
	n := len(c.sessions)
	c.mu.Unlock()
	fmt.Fprintf(f, "autopost.Counter{shard count: %d, sessions attached: %d}", c.shardCount, n)
}
