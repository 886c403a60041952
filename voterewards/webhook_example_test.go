package voterewards_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// A webhook receiver hands its votes to the poller with IngestWebhook, its
// OnVote: the delivery is answered 204 once the vote is stored, and the
// running Run rewards it at once, with the webhook's id and query.
func ExamplePoller_IngestWebhook() {
	srv, err := topggtest.NewServer() // the fake Top.gg: the vote history and the webhooks
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client, err := srv.NewClient()
	if err != nil {
		panic(err)
	}
	rewarded := make(chan voterewards.Vote, 1)
	p, err := voterewards.New(client, voterewards.Config{
		Store:    voterewards.NewMemoryStore(),
		OnReward: func(_ context.Context, v voterewards.Vote) error { rewarded <- v; return nil },
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	const secret = "whs_example" // from the project's webhook settings
	rcv, err := webhook.New(webhook.Config{Secrets: []webhook.Secret{secret}, OnVote: p.IngestWebhook})
	if err != nil {
		panic(err)
	}
	hooks := httptest.NewServer(rcv) // in a bot: http.Handle("/topgg/webhook", rcv)
	defer hooks.Close()
	if err := srv.AddWebhook(hooks.URL, secret); err != nil {
		panic(err)
	}

	// Wait (bounded) until the first poll has read the history, so that the
	// webhook, not that poll, is the first to tell of the vote below.
	for i := 0; i < 500 && !p.Active("146183080879613966").Covered; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 1,
		CreatedAt: time.Now(), Query: "ref=abc"})
	v := <-rewarded
	fmt.Println("rewarded", v.PlatformID, "from", v.Origin, "query", v.Hook.Query["ref"])

	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// rewarded 146183080879613966 from webhook query abc
}
