package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/voterewards"
)

// The suite's cases of the rest of a bot's state: the command hash and the
// reminder opt-ins. (The fence is each storage's own: its tests check it.)

// fingerprint is a command hash as commands computes them: sha256, in hex.
func fingerprint(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func loadHash(t *testing.T, s voterewards.State) string {
	t.Helper()
	h, err := s.LoadHash(context.Background())
	require.NoError(t, err)
	return h
}

func testHash(t *testing.T, s voterewards.State) {
	assert.Empty(t, loadHash(t, s), "none saved yet")
	require.NoError(t, s.SaveHash(context.Background(), fingerprint("a")))
	assert.Equal(t, fingerprint("a"), loadHash(t, s))
	require.NoError(t, s.SaveHash(context.Background(), fingerprint("b")))
	assert.Equal(t, fingerprint("b"), loadHash(t, s), "a save replaces the hash")
}

// requireReminder checks the user's opt-in and last reminded vote.
func requireReminder(t *testing.T, s voterewards.State, user string, on bool, last string, msg string) {
	t.Helper()
	gotOn, gotLast, err := s.Reminder(context.Background(), user)
	require.NoError(t, err)
	assert.Equal(t, on, gotOn, "%s: on", msg)
	assert.Equal(t, last, gotLast, "%s: last", msg)
}

func testReminders(t *testing.T, s voterewards.State) {
	ctx := context.Background()
	u, other := voter(1), voter(2)
	requireReminder(t, s, u, false, "", "off by default")
	require.NoError(t, s.Reminded(ctx, u, "k0"))
	requireReminder(t, s, u, false, "", "Reminded records nothing for a user who is off")
	require.NoError(t, s.SetReminder(ctx, u, true))
	requireReminder(t, s, u, true, "", "on, never reminded")
	require.NoError(t, s.Reminded(ctx, u, "k1"))
	requireReminder(t, s, u, true, "k1", "Reminded records the vote")
	require.NoError(t, s.SetReminder(ctx, u, true))
	requireReminder(t, s, u, true, "k1", "on again keeps the last vote reminded")
	requireReminder(t, s, other, false, "", "another user is untouched")
	require.NoError(t, s.SetReminder(ctx, u, false))
	requireReminder(t, s, u, false, "", "off")
	require.NoError(t, s.SetReminder(ctx, u, false), "off again")
	require.NoError(t, s.Reminded(ctx, u, "k2"))
	require.NoError(t, s.SetReminder(ctx, u, true))
	requireReminder(t, s, u, true, "", "what came while off was not recorded")
}

// testRemindersConcurrent opts many users in at once, each then reminded:
// none is lost.
func testRemindersConcurrent(t *testing.T, s voterewards.State) {
	const users = 32
	var wg sync.WaitGroup
	for i := range users {
		wg.Go(func() {
			u := voter(i)
			if assert.NoError(t, s.SetReminder(context.Background(), u, true)) {
				assert.NoError(t, s.Reminded(context.Background(), u, "k"+u))
			}
		})
	}
	wg.Wait()
	for i := range users {
		requireReminder(t, s, voter(i), true, "k"+voter(i), voter(i))
	}
}
