package topgg_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// The examples run against topggtest, the package's in-memory fake of the service.
// In production, leave out WithBaseURL: the client then talks to https://top.gg/api.

func ExampleNew() {
	srv, err := topggtest.NewServer() // a Discord bot project
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	p, err := client.Project(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Name, p.Platform, p.Type)
	// The token is never printed, logged or part of an error.
	fmt.Println(strings.Contains(fmt.Sprintf("%+v", client), srv.Token()))
	// Output:
	// Example Bot discord bot
	// false
}

func ExampleClient_Votes() {
	srv, err := topggtest.NewServer(topggtest.WithPageSize(2))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	start := time.Now().Add(-time.Hour)
	for i, user := range []string{"800000000000000001", "800000000000000002", "800000000000000003"} {
		srv.AddVote(topggtest.Vote{UserID: user, PlatformID: "14618308087961396" + fmt.Sprint(i), CreatedAt: start.Add(time.Duration(i) * time.Minute)})
	}
	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// Page by page: from a start date, then by cursor until a page is empty.
	q := topgg.VotesQuery{StartDate: start}
	for {
		page, err := client.Votes(ctx, q)
		if err != nil {
			log.Fatal(err)
		}
		if len(page.Votes) == 0 {
			break
		}
		fmt.Println("page of", len(page.Votes))
		q = topgg.VotesQuery{Cursor: page.Cursor} // save the cursor to resume later
	}
	// Output:
	// page of 2
	// page of 1
}

func ExampleClient_AllVotes() {
	srv, err := topggtest.NewServer(topggtest.WithPageSize(2))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	start := time.Now().Add(-time.Hour)
	for i, user := range []string{"800000000000000001", "800000000000000002", "800000000000000003"} {
		srv.AddVote(topggtest.Vote{UserID: user, PlatformID: "14618308087961396" + fmt.Sprint(i), Weight: 1 + i%2, CreatedAt: start.Add(time.Duration(i) * time.Minute)})
	}
	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}

	// The iterator follows the cursor; breaking out of the loop stops the requests.
	for v, err := range client.AllVotes(context.Background(), start) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(v.PlatformID, v.Weight)
	}
	// Output:
	// 146183080879613960 1
	// 146183080879613961 2
	// 146183080879613962 1
}

func ExampleClient_VoteStatus() {
	srv, err := topggtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 2})
	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// By Discord user id; no active vote is nil, not an error.
	for _, user := range []string{"146183080879613966", "111111111111111111"} {
		v, err := client.VoteStatus(ctx, user, topgg.UserIDDiscord)
		switch {
		case err != nil:
			log.Fatal(err)
		case v == nil:
			fmt.Println(user, "has no active vote")
		default:
			fmt.Println(v.PlatformID, v.Weight, v.ExpiresAt.Sub(v.CreatedAt))
		}
	}
	// Output:
	// 146183080879613966 2 12h0m0s
	// 111111111111111111 has no active vote
}

func ExampleClient_UpdateMetrics() {
	srv, err := topggtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	err = client.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1200), ShardCount: new(2)})
	if err != nil {
		log.Fatal(err)
	}
	// A payload that breaks a rule is refused before any request.
	err = client.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(-1)})
	fmt.Println(err)
	fmt.Println(srv.Metrics()[0].Metrics)
	// Output:
	// invalid metrics.server_count: is -1 (rule: >= 0)
	// map[server_count:1200 shard_count:2]
}

func ExampleLegacy_PostStats() {
	srv, err := topggtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	botID := srv.Project().PlatformID // the bot's Discord application id

	// v0 calls use the bare token and wait for a slot of the 60/min limit.
	v0 := client.Legacy()
	if err := v0.PostStats(ctx, botID, topgg.BotStats{ServerCount: 1200, Shards: []int{600, 600}, ShardCount: 2}); err != nil {
		log.Fatal(err)
	}
	st, err := v0.Stats(ctx, botID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.ServerCount, st.Shards, st.ShardCount)
	// Output:
	// 1200 [600 600] 2
}

// Retryable is the one question a caller asks of any error: is it worth making the
// call again later? A Retry-After, on any status, also says when: the client
// refuses the route's calls until then, without sending them.
func ExampleRetryable() {
	srv, err := topggtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/metrics", Status: 503, RetryAfter: time.Hour}); err != nil {
		log.Fatal(err)
	}

	err = client.UpdateMetrics(context.Background(), topgg.BotMetrics{ServerCount: new(1200)})
	var rl *topgg.RateLimitError
	fmt.Println(topgg.Retryable(err), errors.As(err, &rl), rl.RetryAfter)

	err = client.UpdateMetrics(context.Background(), topgg.BotMetrics{ServerCount: new(1201)})
	fmt.Println(errors.As(err, &rl), rl.Local, len(srv.Requests()))

	err = client.UpdateMetrics(context.Background(), topgg.BotMetrics{ServerCount: new(-1)})
	fmt.Println(topgg.Retryable(err))
	// Output:
	// true true 1h0m0s
	// true true 1
	// false
}
