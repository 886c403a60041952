package topgg_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// The benchmarks compare each call of the client with a "floor": the same request
// written by hand with net/http and encoding/json (same headers, body read in full,
// json.Unmarshal into an equivalent struct), against the same kind of topggtest
// server, in one run. Both sides include the fake server's own work.
//
//	go test -run '^$' -bench . -benchmem -count 5 ./topgg/

const benchUA = "go-topgg (https://github.com/dblkit/go-topgg)"

// floorClient is what a careful hand-written client would use: the same transport
// settings as topgg's default client.
func floorClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	t.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: t, Timeout: 60 * time.Second}
}

// floorDo sends one request the plain way and decodes a 2xx body into out.
func floorDo(ctx context.Context, hc *http.Client, method, target, auth string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", benchUA)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	data, err := floorRead(resp)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if out != nil && len(data) > 0 {
		return json.Unmarshal(data, out)
	}
	return nil
}

// floorRead reads a body as a careful hand-written client does: into one
// buffer of its Content-Length when the server sends one (bounded), else
// growing as io.ReadAll does, bounded too.
func floorRead(resp *http.Response) ([]byte, error) {
	const limit = 32 << 20
	if n := resp.ContentLength; n >= 0 && n <= limit {
		data := make([]byte, n)
		_, err := io.ReadFull(resp.Body, data)
		return data, err
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

// benchPair runs the client and the floor as sub-benchmarks of one benchmark, each
// against its own server, and reports connections per call.
func benchPair(b *testing.B, setup func(*topggtest.Server), client func(context.Context, *topgg.Client) error,
	floor func(ctx context.Context, hc *http.Client, srv *topggtest.Server) error) {
	b.Run("client", func(b *testing.B) {
		srv := benchServer(b, setup)
		c, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL), topgg.WithLegacyLimit(0, 0))
		if err != nil {
			b.Fatal(err)
		}
		run(b, srv, func(ctx context.Context) error { return client(ctx, c) })
	})
	b.Run("floor", func(b *testing.B) {
		srv := benchServer(b, setup)
		hc := floorClient()
		b.Cleanup(hc.CloseIdleConnections)
		run(b, srv, func(ctx context.Context) error { return floor(ctx, hc, srv) })
	})
}

func benchServer(b *testing.B, setup func(*topggtest.Server)) *topggtest.Server {
	srv, err := topggtest.NewServer(topggtest.WithLegacyLimit(0, 0))
	require.NoError(b, err)
	b.Cleanup(srv.Close)
	if setup != nil {
		setup(srv)
	}
	return srv
}

func run(b *testing.B, srv *topggtest.Server, call func(context.Context) error) {
	ctx := context.Background()
	if err := call(ctx); err != nil { // open the connection outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// Every connection the server accepted, the first one included.
	b.ReportMetric(float64(srv.Accepts())/float64(b.N), "conns/op")
	b.ReportMetric(float64(srv.Accepts()), "conns")
}

const benchVoter = "800506814562787328"

func BenchmarkVoteStatus(b *testing.B) {
	setup := func(srv *topggtest.Server) {
		srv.AddVote(topggtest.Vote{UserID: benchVoter, PlatformID: "146183080879613966", Weight: 2})
	}
	benchPair(b, setup,
		func(ctx context.Context, c *topgg.Client) error {
			st, err := c.VoteStatus(ctx, benchVoter, "")
			if err == nil && st == nil {
				err = fmt.Errorf("no vote")
			}
			return err
		},
		func(ctx context.Context, hc *http.Client, srv *topggtest.Server) error {
			var st struct {
				CreatedAt time.Time `json:"created_at"`
				ExpiresAt time.Time `json:"expires_at"`
				Weight    int       `json:"weight"`
			}
			return floorDo(ctx, hc, "GET", srv.URL+"/v1/projects/@me/votes/"+benchVoter, "Bearer "+srv.Token(), nil, &st)
		})
}

func BenchmarkUpdateMetrics(b *testing.B) {
	n := 0
	benchPair(b, nil,
		func(ctx context.Context, c *topgg.Client) error {
			n++
			return c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(n), ShardCount: new(2)})
		},
		func(ctx context.Context, hc *http.Client, srv *topggtest.Server) error {
			n++
			body, err := json.Marshal(struct {
				ServerCount int `json:"server_count"`
				ShardCount  int `json:"shard_count"`
			}{n, 2})
			if err != nil {
				return err
			}
			return floorDo(ctx, hc, "PATCH", srv.URL+"/v1/projects/@me/metrics", "Bearer "+srv.Token(), body, nil)
		})
}

func BenchmarkVotesPage(b *testing.B) {
	start := time.Now().Add(-24 * time.Hour).UTC()
	setup := func(srv *topggtest.Server) {
		for i := range 100 {
			srv.AddVote(topggtest.Vote{
				UserID: fmt.Sprint(800506814562787328 + i), PlatformID: fmt.Sprint(146183080879613966 + i),
				Weight: 1 + i%2, CreatedAt: start.Add(time.Duration(i)*time.Minute + 347320*time.Microsecond),
			})
		}
	}
	type vote struct {
		UserID     string    `json:"user_id"`
		PlatformID string    `json:"platform_id"`
		Weight     int       `json:"weight"`
		CreatedAt  time.Time `json:"created_at"`
		ExpiresAt  time.Time `json:"expires_at"`
	}
	benchPair(b, setup,
		func(ctx context.Context, c *topgg.Client) error {
			p, err := c.Votes(ctx, topgg.VotesQuery{StartDate: start})
			if err == nil && len(p.Votes) != 100 {
				err = fmt.Errorf("%d votes", len(p.Votes))
			}
			return err
		},
		func(ctx context.Context, hc *http.Client, srv *topggtest.Server) error {
			var p struct {
				Cursor string `json:"cursor"`
				Data   []vote `json:"data"`
			}
			target := srv.URL + "/v1/projects/@me/votes?startDate=" + url.QueryEscape(start.Format(time.RFC3339Nano))
			if err := floorDo(ctx, hc, "GET", target, "Bearer "+srv.Token(), nil, &p); err != nil {
				return err
			}
			if len(p.Data) != 100 {
				return fmt.Errorf("%d votes", len(p.Data))
			}
			return nil
		})
}

func BenchmarkLegacyBot(b *testing.B) {
	botID := topggtest.DiscordBot().PlatformID
	benchPair(b, nil,
		func(ctx context.Context, c *topgg.Client) error {
			_, err := c.Legacy().Bot(ctx, botID)
			return err
		},
		func(ctx context.Context, hc *http.Client, srv *topggtest.Server) error {
			var out topgg.Bot // the same decode target: the floor differs in transport only
			return floorDo(ctx, hc, "GET", srv.URL+"/bots/"+botID, srv.Token(), nil, &out)
		})
}

// BenchmarkObserver measures the cost of an observer on a call: the same
// UpdateMetrics without one and with a no-op one (the hook itself: a Request
// built on the stack, one time.Now pair). Allocations must be equal.
func BenchmarkObserver(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []topgg.Option
	}{
		{"none", nil},
		{"noop", []topgg.Option{topgg.WithObserver(func(topgg.Request) {})}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := benchServer(b, nil)
			c, err := topgg.New(srv.Token(), append([]topgg.Option{topgg.WithBaseURL(srv.URL)}, tc.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			run(b, srv, func(ctx context.Context) error {
				n++
				return c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(n), ShardCount: new(2)})
			})
		})
	}
}

// BenchmarkLegacyHasVoted is the v0 vote check (GET /bots/:id/check) beside
// its floor, both against a server that answers {"voted":1} from memory, so
// that the fake's own work does not hide the client's: client is
// Legacy.HasVoted (the v0 limiter off), floor is net/http with the same
// headers and json.Unmarshal into a struct with an int field. Goal: ns/op
// within 1.2x of the floor.
func BenchmarkLegacyHasVoted(b *testing.B) {
	const botID, userID = "1026525568344264724", benchVoter
	mem := func(b *testing.B) *httptest.Server {
		answer := []byte(`{"voted":1}`)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "11")
			_, _ = w.Write(answer)
		}))
		b.Cleanup(srv.Close)
		return srv
	}
	b.Run("client", func(b *testing.B) {
		srv := mem(b)
		c, err := topgg.New("bench-token", topgg.WithBaseURL(srv.URL), topgg.WithLegacyLimit(0, 0))
		require.NoError(b, err)
		loop(b, func(ctx context.Context) error {
			ok, err := c.Legacy().HasVoted(ctx, botID, userID)
			if err == nil && !ok {
				err = errors.New("not voted")
			}
			return err
		})
	})
	b.Run("floor", func(b *testing.B) {
		srv := mem(b)
		hc := floorClient()
		b.Cleanup(hc.CloseIdleConnections)
		target := srv.URL + "/bots/" + botID + "/check?userId=" + userID
		loop(b, func(ctx context.Context) error {
			var out struct {
				Voted int `json:"voted"`
			}
			if err := floorDo(ctx, hc, "GET", target, "bench-token", nil, &out); err != nil {
				return err
			}
			if out.Voted != 1 {
				return errors.New("not voted")
			}
			return nil
		})
	})
}

// loop times call b.N times after one untimed call (which opens the connection).
func loop(b *testing.B, call func(context.Context) error) {
	ctx := context.Background()
	if err := call(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// The process's CPU time (client and server goroutines), steadier than
	// ns/op when other jobs share the machine.
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the CPU time the process has used (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
