package topggtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// get is what a client under test would do; here plain net/http.
func get(srv *topggtest.Server, path string) (*http.Response, []byte) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+path, nil)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	res, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res, body
}

func ExampleNewServer() {
	srv, err := topggtest.NewServer() // a Discord bot project by default
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	_, body := get(srv, "/v1/projects/@me")
	var p struct{ Name, Platform, Type string }
	if err := json.Unmarshal(body, &p); err != nil {
		panic(err)
	}
	fmt.Println(p.Name, p.Platform, p.Type)
	fmt.Println(srv.Requests()[0].Path)
	// Output:
	// Example Bot discord bot
	// /v1/projects/@me
}

func ExampleServer_AddVote() {
	now := time.Date(2026, 1, 17, 23, 36, 6, 347320000, time.UTC)
	srv, err := topggtest.NewServer(topggtest.WithNow(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 2})

	_, body := get(srv, "/v1/projects/@me/votes?startDate="+url.QueryEscape(now.Add(-time.Hour).Format(time.RFC3339)))
	var page struct {
		Cursor string
		Data   []struct {
			UserID    string `json:"user_id"`
			CreatedAt string `json:"created_at"`
			ExpiresAt string `json:"expires_at"`
		}
	}
	if err := json.Unmarshal(body, &page); err != nil {
		panic(err)
	}
	fmt.Println(page.Data[0].UserID, page.Data[0].CreatedAt, page.Data[0].ExpiresAt)
	fmt.Println(page.Cursor != "")
	// Output:
	// 800506814562787328 2026-01-17T23:36:06.34732Z 2026-01-18T11:36:06.34732Z
	// true
}

func ExampleServer_Inject() {
	srv, err := topggtest.NewServer()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	if err := srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", RetryAfter: 3 * time.Second}); err != nil {
		panic(err)
	}

	res, body := get(srv, "/v1/projects/@me")
	fmt.Println(res.StatusCode, res.Header.Get("Retry-After"), string(body))
	res, _ = get(srv, "/v1/projects/@me")
	fmt.Println(res.StatusCode)
	// Output:
	// 429 3 {"type":"about:blank","title":"Too Many Requests","status":429,"detail":"injected fault","retry-after":3}
	// 200
}

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

	srv.AddVoteQuery("ref=abc", topggtest.Vote{UserID: "900000000000000001", PlatformID: "160105994217586689"})
	v := <-votes
	fmt.Println(v.ID, v.PlatformID, v.Query["ref"])
	// Output: 808499215864008705 160105994217586689 abc
}
