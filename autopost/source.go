package autopost

import "context"

// Source gives a [Poster] the numbers to post, such as a [Counter] or a
// fleet's total. Implementations must be safe for concurrent use.
type Source interface {
	// Counts returns the bot's numbers now; the Poster posts nothing while
	// Missing is not empty, and reports and retries an error.
	Counts(ctx context.Context) (Counts, error)
	// Changed returns a channel that is closed, or receives, when a shard
	// reported first or went away; nil if the Source cannot tell, and the
	// Poster then polls Counts.
	Changed() <-chan struct{}
}

// Counts is what a [Source] reports: the numbers one post sends.
type Counts struct {
	// Servers is the guilds of the shards that reported, outages included.
	Servers int
	// Unavailable is how many of Servers are in an outage (0 if unknown).
	Unavailable int
	// Shards is the bot's total shard count, posted as shard_count.
	Shards int
	// PerShard holds the servers of each shard by id, Shards long; a shard in
	// Missing shows 0.
	PerShard []int
	// Missing lists, in ascending order, the shard ids of [0, Shards) that
	// have not reported. Nothing is posted while it is not empty.
	Missing []int
	// BotID is the bot's Discord user id, from READY; v0 stats need it.
	BotID string
}

// Complete reports whether every shard of [0, Shards) has reported.
func (c Counts) Complete() bool { return c.Shards > 0 && len(c.Missing) == 0 }
