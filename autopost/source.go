package autopost

import "context"

// Source gives a [Poster] the numbers to post. The default Source is the
// [Counter] of the Poster's own sessions; a fleet of processes, each counting
// its own shards, gives the leader's Poster a Source that adds up what every
// process published, so that the listing gets the exact total.
//
// Implementations must be safe for concurrent use.
type Source interface {
	// Counts returns the bot's numbers now. Counts.Missing lists the shards
	// of [0, Counts.Shards) that have not reported yet: while it is not
	// empty the Poster posts nothing (not even the first post), since a
	// partial total would replace the listing's exact one. An error (the
	// shared store is unreachable, say) is reported and retried with
	// backoff; ctx bounds the call.
	Counts(ctx context.Context) (Counts, error)
	// Changed returns a channel that is closed, or receives, when Counts may
	// have changed in a way that matters before the first post (a shard
	// reported for the first time, or went away). The Poster waits on it
	// while the counts are incomplete, so the first post goes out at once.
	// A Source that cannot tell returns nil: the Poster then asks Counts
	// again every sixteenth of the interval (at most every minute).
	Changed() <-chan struct{}
}

// Counts is what a [Source] reports: the numbers one post sends.
type Counts struct {
	// Servers is the number of guilds of the shards that reported, those in
	// an outage included.
	Servers int
	// Unavailable is how many of Servers are in an outage now (0 when the
	// Source cannot tell).
	Unavailable int
	// Shards is the bot's total shard count, posted as shard_count.
	Shards int
	// PerShard holds the servers of each shard by shard id, for v0 stats;
	// its length is Shards. A shard in Missing shows 0.
	PerShard []int
	// Missing lists, in ascending order, the shard ids of [0, Shards) that
	// have not reported: no READY yet, detached, or (in a fleet) silent for
	// too long. Nothing is posted while it is not empty.
	Missing []int
	// BotID is the bot's Discord user id, from READY; v0 stats need it.
	BotID string
}

// Complete reports whether every shard of [0, Shards) has reported, so that
// the counts may be posted.
func (c Counts) Complete() bool { return c.Shards > 0 && len(c.Missing) == 0 }
