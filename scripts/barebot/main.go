// Command barebot is the floor that scripts/botrss measures the example bot
// against: a bare discordgo bot that counts the guilds of SHARD_COUNT shards
// from GUILD_CREATE and GUILD_DELETE (discordgo's State off, as in the
// example bot) and PATCHes the total to Top.gg's metrics endpoint with
// net/http whenever it changed, at most every 200 ms. Nothing else: no
// commands, no vote polling, no store. It reads DISCORD_TOKEN,
// DISCORD_API_URL, SHARD_COUNT, TOPGG_TOKEN and TOPGG_API_URL, and stops on
// SIGTERM.
package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bwmarrin/discordgo"
)

// rewriter sends discordgo's REST calls to DISCORD_API_URL.
type rewriter struct{ base string }

func (r rewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	if rest, ok := strings.CutPrefix(req.URL.String(), discordgo.EndpointAPI); ok {
		req = req.Clone(req.Context())
		u, err := req.URL.Parse(r.base + rest)
		if err != nil {
			return nil, err
		}
		req.URL, req.Host = u, ""
	}
	return http.DefaultTransport.RoundTrip(req)
}

// counter holds the guild IDs of every shard.
type counter struct {
	mu     sync.Mutex
	guilds []map[uint64]struct{}
}

func (c *counter) set(shard int, id string, in bool) {
	g, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in {
		c.guilds[shard][g] = struct{}{}
	} else {
		delete(c.guilds[shard], g)
	}
}

func (c *counter) total() (n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.guilds {
		n += len(m)
	}
	return n
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "barebot:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, err := strconv.Atoi(os.Getenv("SHARD_COUNT"))
	if err != nil || n < 1 {
		return fmt.Errorf("SHARD_COUNT: %q", os.Getenv("SHARD_COUNT"))
	}
	hc := &http.Client{Transport: rewriter{base: strings.TrimRight(os.Getenv("DISCORD_API_URL"), "/") + "/"}}
	c := &counter{guilds: make([]map[uint64]struct{}, n)}
	sessions := make([]*discordgo.Session, n)
	for i := range n {
		c.guilds[i] = map[uint64]struct{}{}
		s, err := discordgo.New("Bot " + os.Getenv("DISCORD_TOKEN"))
		if err != nil {
			return err
		}
		s.Client, s.StateEnabled = hc, false
		s.ShardID, s.ShardCount = i, n
		s.Identify.Intents = discordgo.IntentsGuilds
		s.AddHandler(func(_ *discordgo.Session, e *discordgo.GuildCreate) { c.set(i, e.ID, true) })
		s.AddHandler(func(_ *discordgo.Session, e *discordgo.GuildDelete) { c.set(i, e.ID, e.Unavailable) })
		if err := s.Open(); err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
		defer s.Close()
		sessions[i] = s
	}
	url := strings.TrimRight(os.Getenv("TOPGG_API_URL"), "/") + "/v1/projects/@me/metrics"
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	last := -1
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if t := c.total(); t != last && post(ctx, url, t) == nil {
			last = t
		}
	}
}

// post sends the server count.
func post(ctx context.Context, url string, count int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, url, bytes.NewReader(fmt.Appendf(nil, `{"server_count":%d}`, count)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv("TOPGG_TOKEN"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("metrics: %s", resp.Status)
	}
	return nil
}
