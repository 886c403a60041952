package voterewards_test

// Findings of the hostile review (review-attack) in files outside the
// ledger's: each test failed on the code it names before its fix.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// reviewPoller is a Poller on a bolt store, not running: webhook votes are
// stored and counted by IngestWebhook alone.
func reviewPoller(t *testing.T) *voterewards.Poller {
	t.Helper()
	s, err := voterewards.OpenStore(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	p, err := voterewards.New(historyNever{}, voterewards.Config{
		Store: s, OnReward: func(context.Context, voterewards.Vote) error { return nil },
	})
	require.NoError(t, err)
	return p
}

// TestReviewAncientHistoryVote: a vote of the history created before 1678
// (a service's bug) passes sanitize; its time does not fit the stores'
// nanosecond encoding (bolt's putTime, pgstore's UnixNano), so the ledger
// keeps another time: the bolt voter's LastVote becomes 2169 (the 1000 vote
// read back), every later vote is "late", and the streak and month never
// move again. sanitize must refuse it or treat it as missing. (A webhook
// vote that old is now dropped as expired on arrival, 3111948; the history
// path still counts it.)
func TestReviewAncientHistoryVote(t *testing.T) {
	ctx := context.Background()
	s, err := voterewards.OpenStore(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	now := time.Now().UTC().Truncate(time.Second)
	ancient := time.Date(1000, 6, 15, 0, 0, 0, 0, time.UTC)
	const user = "3000000000000000001"
	src := &onePage{page: topgg.VotePage{Cursor: "c1", Votes: []topgg.Vote{
		{PlatformID: user, Weight: 1, CreatedAt: ancient, ExpiresAt: ancient.Add(voterewards.VoteLifetime)},
		{PlatformID: user, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)},
	}}}
	p := startPoller(t, src, voterewards.Config{Store: s, OnReward: func(context.Context, voterewards.Vote) error { return nil }})
	var st voterewards.Stats
	require.Eventually(t, func() bool {
		st, err = p.Stats(ctx, user)
		return err == nil && st.Votes > 0
	}, 10*time.Second, 5*time.Millisecond, "the page was not ingested")
	assert.True(t, st.LastVote.Equal(now), "LastVote %v, want the modern vote's %v", st.LastVote, now)
	votes, _ := st.ThisMonth(now)
	assert.Positive(t, votes, "the modern vote counts in its month")
	assert.Equal(t, 1, st.CurrentStreak(now), "the modern vote starts a streak")
}

// onePage is a History that answers one page, then no new vote.
type onePage struct {
	mu   sync.Mutex
	page topgg.VotePage
	sent bool
}

func (o *onePage) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sent {
		return &topgg.VotePage{Cursor: o.page.Cursor}, nil
	}
	o.sent = true
	p := o.page
	return &p, nil
}

// TestReviewControlCharactersInIDs: Discord and Top.gg ids are numbers; an
// id holding a control character or invalid UTF-8 is stored by bolt but
// fails PostgreSQL's text (NUL, bad UTF-8: the whole Ingest fails on every
// retry) and splits pgstore's feed payloads ("\n"). checkIDs should refuse
// it (ErrInvalidVote) so that every store sees the same votes.
func TestReviewControlCharactersInIDs(t *testing.T) {
	ctx := context.Background()
	p := reviewPoller(t)
	now := time.Now().UTC()
	for _, id := range []string{"3\x00001", "3\n001", "3\xff001"} {
		err := p.IngestWebhook(ctx, webhook.Vote{Version: 1, ID: "v" + id, PlatformID: id, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)})
		assert.ErrorIs(t, err, voterewards.ErrInvalidVote, "%q", id)
	}
}

// historyNever is a History the tests never poll.
type historyNever struct{}

func (historyNever) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	return nil, nil
}
