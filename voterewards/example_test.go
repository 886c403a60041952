package voterewards_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// A bot rewards each vote once; here against the fake service.
func Example() {
	srv := topggtest.NewServer()
	defer srv.Close()
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 2,
		CreatedAt: time.Now().Add(-time.Hour)})

	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL), topgg.WithHTTPClient(srv.Client()))
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "voterewards-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := voterewards.OpenStore(dir) // survives restarts and kill -9
	if err != nil {
		panic(err)
	}
	defer store.Close()

	rewarded := make(chan voterewards.Vote, 1)
	p, err := voterewards.New(client, voterewards.Config{
		Store: store,
		OnReward: func(ctx context.Context, v voterewards.Vote) error {
			// Give the reward here; v.Key is an idempotency key.
			rewarded <- v
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	if err := p.Start(context.Background()); err != nil {
		panic(err)
	}
	defer p.Close()

	v := <-rewarded
	fmt.Println("reward Discord user", v.PlatformID, "weight", v.Weight)
	fmt.Println("active:", p.Active("146183080879613966").Active)
	// Output:
	// reward Discord user 146183080879613966 weight 2
	// active: true
}

func ExampleOpenStore() {
	dir, err := os.MkdirTemp("", "voterewards-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := voterewards.OpenStore(dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()

	// A second process on the same directory is refused.
	_, err = voterewards.OpenStore(dir)
	fmt.Println(errors.Is(err, voterewards.ErrLocked))
	// Output: true
}
