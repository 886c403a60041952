package pgstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/voterewards"
)

// TestLedgerCacheBound: the cache holds ledgerCacheSize voters, drops one
// only to add another (not to update one it holds), and once it has dropped
// one, a voter it does not hold is no longer taken for a new voter.
func TestLedgerCacheBound(t *testing.T) {
	var l ledgers
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	put := func(id string, votes int) {
		l.put([]voterewards.Vote{{Stats: voterewards.Stats{UserID: id, Votes: votes, LastVote: at}}})
	}
	for i := range ledgerCacheSize {
		put(strconv.Itoa(i), 1)
	}
	_, ok := l.get([]string{"new"})
	assert.True(t, ok, "full but nothing dropped: a voter not held is new")
	put("0", 2)
	assert.Len(t, l.m, ledgerCacheSize, "an update drops no one")
	got, ok := l.get([]string{"0"})
	assert.True(t, ok)
	assert.Equal(t, 2, got["0"].Votes)

	put("new", 1)
	assert.Len(t, l.m, ledgerCacheSize, "one dropped for the new one")
	_, ok = l.get([]string{"another"})
	assert.False(t, ok, "a voter not held may be one dropped")
	_, ok = l.get([]string{"new"})
	assert.True(t, ok, "held ones still serve")
}

// TestLedgerCacheSitsOutAfterARefusal: after the database refused a write
// from the cache, the next 9 batches are read first; then it tries again.
// Writes it served wear a refusal off, each as a batch sat out does.
func TestLedgerCacheSitsOutAfterARefusal(t *testing.T) {
	var l ledgers
	_, ok := l.get([]string{"1"})
	require.True(t, ok)
	l.served(false)
	for i := range 9 {
		_, ok := l.get([]string{"1"})
		require.False(t, ok, "batch %d after the refusal", i+1)
	}
	_, ok = l.get([]string{"1"})
	require.True(t, ok, "tried again")

	var m ledgers
	m.served(false)
	for range 9 {
		m.served(true)
	}
	_, ok = m.get([]string{"1"})
	require.True(t, ok, "9 writes served since the refusal")
}
