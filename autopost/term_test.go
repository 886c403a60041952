package autopost_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/term"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// fixedSource returns complete counts.
type fixedSource struct{}

func (fixedSource) Counts(context.Context) (autopost.Counts, error) {
	return autopost.Counts{Servers: 7, Shards: 1, PerShard: []int{7}}, nil
}

func (fixedSource) Changed() <-chan struct{} { return nil }

// TestPosterPostsNothingOnceItsTermIsOver: a fleet leader's Poster posts
// while its term is valid; when the term's deadline passes after that post
// (a pause, with nothing cancelled), the next post, due at once, is not
// sent nor reported, and Run returns (the failed check ended the term and
// cancelled its context).
func TestPosterPostsNothingOnceItsTermIsOver(t *testing.T) {
	t.Parallel()
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	client, err := tg.NewClient()
	require.NoError(t, err)
	start := time.Unix(1_700_000_000, 0)
	termClock := clock.NewFake(start)
	var results atomic.Int32
	p, err := autopost.New(client, autopost.Config{Source: fixedSource{}, Interval: 10 * time.Millisecond,
		Refresh: 10 * time.Millisecond, OnPost: func(autopost.Result) {
			results.Add(1)
			termClock.Advance(time.Second) // a pause right after the first post
		}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tm := term.New(termClock, start.Add(time.Second), cancel)
	done := make(chan error, 1)
	go func() { done <- p.Run(term.With(ctx, tm)) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run went on after its term was over")
	}
	assert.Len(t, tg.Metrics(), 1, "posted after the term's deadline")
	assert.Equal(t, int32(1), results.Load(), "the refused post was reported")
	assert.ErrorIs(t, term.Check(term.With(ctx, tm)), term.ErrOver)
}
