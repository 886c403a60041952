package shards

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/topgg"
)

// Defaults of a Group made without options.
const (
	defaultMaxBodySize = 8 << 20          // Discord's largest answers are a few hundred KiB
	defaultTimeout     = 20 * time.Second // of one REST call, its rate-limit waits included (discordgo's)
	openAbortGrace     = 2 * time.Second  // for an aborted discordgo Open to return
)

// Option configures a Group. An option given an invalid value makes New fail.
type Option func(*config) error

type config struct {
	apiBase    string // with a trailing slash; "" is discordgo.EndpointAPI
	logger     *slog.Logger
	maxBody    int64
	clock      clock.Clock
	abortGrace time.Duration
	shardIDs   []int // WithShardIDs; nil: every shard
}

func defaultConfig() config {
	return config{
		logger:     slog.New(slog.DiscardHandler),
		maxBody:    defaultMaxBodySize,
		clock:      clock.Real(),
		abortGrace: openAbortGrace,
	}
}

// WithAPIBase sends the REST calls to base, an absolute http(s) URL without
// user info, query or fragment, instead of discordgo.EndpointAPI.
func WithAPIBase(base string) Option {
	return func(c *config) error {
		if _, err := httpx.ParseBaseURL(base, false); err != nil {
			return &topgg.ValidationError{Field: "Discord API base", Problem: err.(*httpx.URLError).Problem, Rule: "https://host[/path]"}
		}
		c.apiBase = trimBase(base)
		return nil
	}
}

// WithLogger sets the logger (default: discard). The Group logs rate-limit
// waits, shard connections and Serve's steps, never a token.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("shards: nil logger")
		}
		c.logger = l
		return nil
	}
}

// WithShardIDs makes the Group run only these shards, distinct and in
// [0, shardCount); none is every shard, the default.
func WithShardIDs(ids ...int) Option {
	return func(c *config) error {
		if len(ids) > 0 {
			c.shardIDs = slices.Clone(ids)
		}
		return nil
	}
}

// ids returns the shard IDs the Group runs, in increasing order.
func (c *config) ids(shardCount int) ([]int, error) {
	if c.shardIDs == nil {
		ids := make([]int, shardCount)
		for i := range ids {
			ids[i] = i
		}
		return ids, nil
	}
	ids := slices.Sorted(slices.Values(c.shardIDs))
	for i, id := range ids {
		if id < 0 || id >= shardCount {
			return nil, &topgg.ValidationError{Field: "shard ids", Problem: fmt.Sprintf("shard %d is out of range", id), Rule: fmt.Sprintf("0 to %d", shardCount-1)}
		}
		if i > 0 && ids[i-1] == id {
			return nil, fmt.Errorf("shards: shard ID %d given twice", id)
		}
	}
	return ids, nil
}
