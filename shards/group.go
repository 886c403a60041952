package shards

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/topgg"
)

// maxShards bounds the shard count: Discord's largest bots run a few thousand.
const maxShards = 1 << 16

// Group is a bot's shard sessions, opened together under a context and closed
// together. Open is called once; Close at any time, from any goroutine, more
// than once. Add handlers and set the sessions' fields before Open.
type Group struct {
	cfg        config
	shardCount int                  // the bot's total
	sessions   []*discordgo.Session // in shard ID order
	dialers    []*gatewayDialer     // one per session
	shut       context.Context      // done once the Group stops connecting (see stop)
	shutFn     context.CancelFunc

	mu         sync.Mutex
	state      groupState
	cancelOpen context.CancelFunc // of the pending Open
	openDone   chan struct{}      // closed when the pending Open returns
	stuck      []bool             // a session whose aborted Open never returned: its lock is held
}

type groupState int

const (
	stateNew groupState = iota
	stateOpening
	stateOpened // Open returned, with or without an error
	stateClosed
)

// New makes the unopened sessions of a bot with shardCount shards, one per
// shard (or per shard of [WithShardIDs]), each with the GUILDS intent. token
// is the bot token without "Bot "; no error quotes it.
func New(token string, shardCount int, opts ...Option) (*Group, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	if shardCount < 1 || shardCount > maxShards {
		return nil, &topgg.ValidationError{Field: "shard count", Problem: fmt.Sprintf("is %d", shardCount), Rule: fmt.Sprintf("1 to %d", maxShards)}
	}
	cfg := defaultConfig()
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("shards: nil option")
		}
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	ids, err := cfg.ids(shardCount)
	if err != nil {
		return nil, err
	}
	g := &Group{cfg: cfg, shardCount: shardCount, stuck: make([]bool, len(ids))}
	g.shut, g.shutFn = context.WithCancel(context.Background())
	client := &http.Client{Timeout: defaultTimeout, Transport: newTransport(&g.cfg, g.shut, http.DefaultTransport)}
	for _, i := range ids {
		s, err := discordgo.New("Bot " + token)
		if err != nil {
			return nil, errors.New("shards: discordgo refused the session") // its error could quote the token
		}
		d := newGatewayDialer()
		// gorilla's default dialer, with d's connections
		s.Client, s.Dialer = client, &websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: handshakeTimeout, NetDialContext: d.dial}
		s.ShardID, s.ShardCount = i, shardCount
		s.Identify.Shard = &[2]int{i, shardCount}
		s.Identify.Intents = discordgo.IntentsGuilds
		g.sessions = append(g.sessions, s)
		g.dialers = append(g.dialers, d)
	}
	return g, nil
}

// checkToken refuses a token that could not work, without quoting it.
func checkToken(token string) error {
	switch {
	case strings.TrimSpace(token) == "":
		return &topgg.ValidationError{Field: "Discord token", Problem: "is empty", Rule: "the bot's token"}
	case strings.ContainsFunc(token, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		// "Bot abc" would be sent as "Bot Bot abc"; a control byte fails every request.
		return &topgg.ValidationError{Field: "Discord token", Problem: "contains white space or a control character",
			Rule: "the token alone, without \"Bot \""}
	}
	return nil
}

// Sessions returns the sessions in shard ID order, in a new slice (with
// [WithShardIDs], this process's shards only).
func (g *Group) Sessions() []*discordgo.Session {
	return append([]*discordgo.Session(nil), g.sessions...)
}

// ForGuild returns the session of guildID's shard, (guild_id >> 22) % shard
// count; a shard this Group does not run is an error wrapping [ErrNotHere].
func (g *Group) ForGuild(guildID string) (*discordgo.Session, error) {
	n, ok := discord.ParseID(guildID)
	if !ok {
		return nil, fmt.Errorf("shards: guild id %q is not a snowflake", guildID)
	}
	shard := discord.ShardOf(n, g.shardCount)
	j, ok := slices.BinarySearchFunc(g.sessions, shard, func(s *discordgo.Session, id int) int { return s.ShardID - id })
	if !ok {
		return nil, fmt.Errorf("%w: guild %s is on shard %d", ErrNotHere, guildID, shard)
	}
	return g.sessions[j], nil
}

// Open connects the shards in turn and returns once each has its READY, or when
// ctx is done with an error wrapping ctx's and [ErrClosed]. Close the Group
// whatever Open returns; a second Open is [ErrOpened].
func (g *Group) Open(ctx context.Context) error {
	if ctx == nil {
		return errors.New("shards: Open: nil context")
	}
	if g.shutFn == nil {
		panic("shards: Open on a Group not made by shards.New") // else it opens nothing
	}
	g.mu.Lock()
	switch g.state {
	case stateOpening, stateOpened:
		g.mu.Unlock()
		return ErrOpened
	case stateClosed:
		g.mu.Unlock()
		return fmt.Errorf("%w: Open after Close", ErrClosed)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	g.state, g.cancelOpen, g.openDone = stateOpening, cancel, done
	g.mu.Unlock()
	defer close(done)
	defer cancel()

	err := g.openAll(ctx)
	g.mu.Lock()
	if g.state == stateOpening {
		g.state = stateOpened
	}
	g.mu.Unlock()
	return err
}

// openAll opens the sessions in order; see Open.
func (g *Group) openAll(ctx context.Context) error {
	for j, s := range g.sessions {
		stopped := func() error {
			g.stop(-1)
			return fmt.Errorf("shards: opening shard %d: %w (%w)", s.ShardID, ctx.Err(), ErrClosed)
		}
		if ctx.Err() != nil {
			return stopped()
		}
		errc := make(chan error, 1)
		go func() { errc <- s.Open() }()
		select {
		case err := <-errc:
			switch {
			case err != nil && ctx.Err() != nil: // it failed because of the stop (a lookup cut short, say)
				return stopped()
			case err != nil:
				return fmt.Errorf("shards: opening shard %d: %w", s.ShardID, discord.Scrub(s, err))
			}
			g.cfg.logger.Debug("shard connected", "shard", s.ShardID, "shards", len(g.sessions))
		case <-ctx.Done():
			return g.abortOpen(ctx, j, errc)
		}
	}
	return nil
}

// abortOpen stops the Group while session j's discordgo Open is pending and
// waits, bounded, for that Open to return.
func (g *Group) abortOpen(ctx context.Context, j int, errc <-chan error) error {
	i := g.sessions[j].ShardID
	g.stop(j)
	grace := g.cfg.clock.NewTimer(g.cfg.abortGrace)
	defer grace.Stop()
	select {
	case <-errc:
		return fmt.Errorf("shards: opening shard %d: %w (%w)", i, ctx.Err(), ErrClosed)
	case <-grace.C():
		g.mu.Lock()
		g.stuck[j] = true
		g.mu.Unlock()
		return fmt.Errorf("shards: opening shard %d: %w (%w); discordgo still waits on Discord %s after the stop, the session is abandoned",
			i, ctx.Err(), ErrClosed, g.cfg.abortGrace)
	}
}

// stop makes the Group stop connecting: gateway lookups end, dials are
// refused, and the pending connection of session abort (if >= 0) is dropped.
func (g *Group) stop(abort int) {
	g.shutFn()
	for i, d := range g.dialers {
		d.stop(i == abort)
	}
}

// Close cancels a pending Open and closes every session concurrently,
// returning their errors; it is idempotent and safe from any goroutine.
func (g *Group) Close() error {
	g.mu.Lock()
	if g.state == stateClosed {
		g.mu.Unlock()
		return nil
	}
	prev, cancel, done := g.state, g.cancelOpen, g.openDone
	g.state = stateClosed
	g.mu.Unlock()
	if prev == stateOpening {
		cancel()
		<-done
	}
	g.stop(-1)

	g.mu.Lock()
	stuck := append([]bool(nil), g.stuck...)
	g.mu.Unlock()
	errs := make([]error, len(g.sessions))
	var wg sync.WaitGroup
	for j, s := range g.sessions {
		if stuck[j] {
			errs[j] = fmt.Errorf("shards: shard %d: not closed: its aborted Open never returned", s.ShardID)
			continue
		}
		wg.Go(func() {
			if err := s.Close(); err != nil {
				errs[j] = fmt.Errorf("shards: closing shard %d: %w", s.ShardID, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Format prints the Group by its shards under every verb (%#v too), never its
// sessions, which hold the bot token.
func (g *Group) Format(f fmt.State, _ rune) {
	if g == nil {
		_, _ = io.WriteString(f, "shards.Group(nil)")
		return
	}
	ids := make([]int, len(g.sessions))
	for i, s := range g.sessions {
		ids[i] = s.ShardID
	}
	fmt.Fprintf(f, "shards.Group{shard count: %d, shards: %v}", g.shardCount, ids)
}

// Sentinel errors, returned wrapped; test them with errors.Is.
var (
	// ErrClosed means the Group was closed, or its Open was cancelled.
	ErrClosed = errors.New("shards: group closed")
	// ErrOpened means Open was called again: a Group is opened once.
	ErrOpened = errors.New("shards: group already opened")
	// ErrNotHere means a guild is on a shard this Group does not run (see
	// WithShardIDs).
	ErrNotHere = errors.New("shards: guild on a shard of another process")
	// ErrRateLimited means Discord kept answering a REST call 429, or its
	// body could not be sent again after one.
	ErrRateLimited = errors.New("rate-limited by Discord")
	// ErrBodyTooLarge means a REST answer's body was longer than the bound
	// (8 MiB); it is not read further.
	ErrBodyTooLarge = errors.New("response body too large")
)
