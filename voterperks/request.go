package voterperks

import (
	"context"

	"github.com/bwmarrin/discordgo"
)

// leaderCall is the options of a leader's Discord write (a role change, a
// DM): the call ends with ctx, and discordgo does not wait out a 429 or
// resend a 502 by itself, since such a resend would go out after the term
// check that preceded the call (a leader paused past its term meanwhile
// would still write). The error goes back to the vote pipeline, which
// retries with its own backoff and checks the term again first. A session
// from package shards waits out a 429 in its transport, which checks the
// term before each send.
func leaderCall(ctx context.Context, more ...discordgo.RequestOption) []discordgo.RequestOption {
	return append([]discordgo.RequestOption{
		discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false), discordgo.WithRestRetries(0),
	}, more...)
}
