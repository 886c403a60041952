package voterewards_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"time"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// A bot rewards each vote once; here against the fake service.
func Example() {
	srv, err := topggtest.NewServer()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 2,
		CreatedAt: time.Now().Add(-time.Hour)})

	client, err := srv.NewClient()
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "voterewards-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := boltstate.Open(dir) // survives restarts and kill -9
	if err != nil {
		panic(err)
	}
	defer store.Close()

	rewarded := make(chan voterewards.Vote, 1)
	p, err := voterewards.New(client, voterewards.Config{
		Store: store,
		OnReward: func(ctx context.Context, v voterewards.Vote) error {
			// Give the reward here; v.Key() is an idempotency key.
			rewarded <- v
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }() // until ctx is done

	v := <-rewarded
	fmt.Println("reward Discord user", v.PlatformID, "weight", v.Weight, "from", v.Origin)
	fmt.Println("active:", p.Active("146183080879613966").Active)

	cancel()
	if err := <-done; err != nil { // returns once every handler call returned
		panic(err)
	}
	// Output:
	// reward Discord user 146183080879613966 weight 2 from history
	// active: true
}

// A webhook receiver hands its votes to Ingest and answers 2xx only on nil:
// the vote is then durably stored, Active knows it, and the running Run
// rewards it at once; the same vote read later from the history (6
// fractional digits and Z instead of 7 and +00:00, no id) is not rewarded
// again.
func ExamplePoller_Ingest() {
	srv, err := topggtest.NewServer()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client, err := srv.NewClient()
	if err != nil {
		panic(err)
	}
	rewarded := make(chan voterewards.Vote, 2)
	p, err := voterewards.New(client, voterewards.Config{
		Store:    voterewards.NewMemoryStore(),
		Interval: 10 * time.Millisecond,
		OnReward: func(_ context.Context, v voterewards.Vote) error { rewarded <- v; return nil },
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	created := time.Now().Add(-time.Second).Truncate(time.Microsecond).Add(700 * time.Nanosecond)
	hook := voterewards.Vote{
		Vote: topgg.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 1,
			CreatedAt: created, ExpiresAt: created.Add(12 * time.Hour)},
		Origin: voterewards.OriginWebhook, Hook: &voterewards.Hook{ID: "808499215864008704", Query: map[string]string{"ref": "abc"}},
	}
	if err := p.Ingest(ctx, hook); err != nil { // answer 5xx on error: Top.gg retries
		panic(err)
	}
	v := <-rewarded
	fmt.Println("rewarded from", v.Origin, "query", v.Hook.Query["ref"], "active:", p.Active("146183080879613966").Active)

	// The history shows the same vote a moment later.
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 1,
		CreatedAt: created.Truncate(time.Microsecond)})
	for range 100 {
		if len(srv.Requests()) > 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	fmt.Println("rewards:", 1+len(rewarded))
	// Output:
	// rewarded from webhook query abc active: true
	// rewards: 1
}

// A bot shows a voter's streak and a leaderboard. Here two votes of one
// user a day apart (one read from the history, one by webhook) and one of
// another user; the Stats are also on each vote the handlers receive
// (v.Stats).
func ExampleStore_stats() {
	srv, err := topggtest.NewServer()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client, err := srv.NewClient()
	if err != nil {
		panic(err)
	}
	store := voterewards.NewMemoryStore()
	p, err := voterewards.New(client, voterewards.Config{
		Store:    store,
		OnReward: func(context.Context, voterewards.Vote) error { return nil },
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	now := time.Now()
	vote := func(user string, created time.Time, weight int, origin voterewards.Origin) voterewards.Vote {
		return voterewards.Vote{Vote: topgg.Vote{PlatformID: user, Weight: weight, CreatedAt: created,
			ExpiresAt: created.Add(voterewards.VoteLifetime)}, Origin: origin}
	}
	// Ingest stores votes without Run; Run would deliver them.
	if err := p.Ingest(ctx,
		vote("146183080879613966", now.Add(-25*time.Hour), 2, voterewards.OriginHistory),
		vote("146183080879613966", now.Add(-time.Hour), 1, voterewards.OriginWebhook),
		vote("222222222222222222", now.Add(-2*time.Hour), 2, voterewards.OriginWebhook),
	); err != nil {
		panic(err)
	}

	st, err := store.Stats(ctx, "146183080879613966")
	if err != nil {
		panic(err)
	}
	fmt.Println("votes", st.Votes, "total", st.Total, "streak", st.CurrentStreak(time.Now()))

	board, err := store.Leaderboard(ctx, time.Time{}, 10) // all time; a month: any instant of it
	if err != nil {
		panic(err)
	}
	for i, s := range board {
		fmt.Println(i+1, s.UserID, s.Total)
	}
	// Output:
	// votes 2 total 3 streak 2
	// 1 146183080879613966 3
	// 2 222222222222222222 2
}

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
	srv.AddVoteQuery("ref=abc", topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 1,
		CreatedAt: time.Now()})
	v := <-rewarded
	fmt.Println("rewarded", v.PlatformID, "from", v.Origin, "query", v.Hook.Query["ref"])

	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// rewarded 146183080879613966 from webhook query abc
}
