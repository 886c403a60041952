package voterperks

import (
	"context"

	"github.com/bwmarrin/discordgo"
)

// leaderCall is the options of a leader's Discord write: the call ends with
// ctx, and discordgo neither waits out a 429 nor resends a 502 itself, since
// a resend would skip the term check before it. The error goes back to the
// vote pipeline, which retries after checking the term again.
func leaderCall(ctx context.Context, more ...discordgo.RequestOption) []discordgo.RequestOption {
	return append([]discordgo.RequestOption{
		discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false), discordgo.WithRestRetries(0),
	}, more...)
}
