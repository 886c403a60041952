package topggtest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// The fake delivers a signed vote.create to a receiver when a vote is added,
// as Top.gg does, and records the answer.
func ExampleWithWebhook() {
	votes := make(chan webhook.Vote, 1)
	h, err := webhook.New(webhook.Config{
		Secrets: []webhook.Secret{"whs_example"},
		OnVote: func(_ context.Context, v webhook.Vote) error {
			votes <- v
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	receiver := httptest.NewServer(h)
	defer receiver.Close()

	srv, err := topggtest.NewServer(
		topggtest.WithWebhook(receiver.URL, "whs_example"),
		// Retries come after 10, 20 and 40 ms instead of 1, 2 and 4 s.
		topggtest.WithWebhookRetries(time.Second, 10*time.Millisecond, 20*time.Millisecond, 40*time.Millisecond))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	srv.AddVote(topggtest.Vote{UserID: "900000000000000001", PlatformID: "160105994217586689", Query: "ref=abc"})
	v := <-votes
	fmt.Println(v.ID, v.PlatformID, v.Query["ref"])
	// Output: 808499215864008705 160105994217586689 abc
}
