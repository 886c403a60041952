package webhook_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/dblkit/go-topgg/topgg/webhook"
)

// A receiver that stores each vote before Top.gg gets its answer, and greets
// the voter after.
func ExampleNew() {
	after := make(chan string, 1)
	h, err := webhook.New(webhook.Config{
		// In production: from the environment, e.g. TOPGG_WEBHOOK_SECRET.
		Secrets: []webhook.Secret{"whs_example_secret"},
		OnVote: func(ctx context.Context, v webhook.Vote) error {
			// Store v durably here; an error makes Top.gg retry.
			fmt.Printf("stored vote %s of user %s (weight %d, ref %s)\n", v.ID, v.PlatformID, v.Weight, v.Query["ref"])
			return nil
		},
		OnEvent: func(ctx context.Context, e webhook.Event) {
			// Runs after Top.gg has its answer: slow work is fine here.
			after <- e.Type
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /topgg/webhook", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// What Top.gg sends, signed as it signs.
	body := []byte(`{"type":"vote.create","data":{"id":"808499215864008704","weight":1,` +
		`"created_at":"2026-02-09T00:47:14.2510149+00:00","expires_at":"2026-02-09T12:47:14.2510149+00:00",` +
		`"project":{"id":"803190510032756736","type":"bot","platform":"discord","platform_id":"160105994217586689"},` +
		`"user":{"id":"900000000000000001","platform_id":"160105994217586689","name":"alice","avatar_url":"https://cdn.example/a.png"},` +
		`"query":{"ref":"abc"}}}`)
	req, err := webhook.NewRequest(context.Background(), srv.URL+"/topgg/webhook", "whs_example_secret", time.Now(), body)
	if err != nil {
		log.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	fmt.Println("then OnEvent got", <-after)
	// Output:
	// stored vote 808499215864008704 of user 160105994217586689 (weight 1, ref abc)
	// 204 No Content
	// then OnEvent got vote.create
}
