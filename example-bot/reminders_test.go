package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/voterperks"
)

// The bot's reminder opt-ins now live in the library (voterperks.FileReminders
// in TOPGG_STATE_DIR, fleet.Reminders in Redis); these tests keep checking,
// through the stores the bot is wired to, what they checked of the bot's own.

// TestFileRemindersSurviveReopen: opt-ins are durable once SetReminder
// returns, survive a reopen (a restart), and opting out removes them.
func TestFileRemindersSurviveReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	const alice, bob = "300000000000000001", "300000000000000002"
	r, err := voterperks.OpenFileReminders(dir)
	require.NoError(t, err)
	require.NoError(t, r.SetReminder(ctx, alice, true))
	require.NoError(t, r.SetReminder(ctx, bob, true))
	require.NoError(t, r.SetReminder(ctx, bob, false))

	again, err := voterperks.OpenFileReminders(dir)
	require.NoError(t, err)
	for user, want := range map[string]bool{alice: true, bob: false, "300000000000000003": false} {
		got, _, err := again.Reminder(ctx, user)
		require.NoError(t, err)
		assert.Equal(t, want, got, user)
	}
	b, err := os.ReadFile(filepath.Join(dir, voterperks.RemindersFile))
	require.NoError(t, err)
	assert.Contains(t, string(b), alice)
	assert.NotContains(t, string(b), bob)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

// TestFileRemindersDamagedFile: a file the bot cannot read stops it with an
// error naming the file, rather than forgetting every opt-in.
func TestFileRemindersDamagedFile(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"torn":            `{"version":1,"users":["3000`,
		"unknown version": `{"version":2,"users":[]}`,
		"not an id":       `{"version":1,"users":["alice"]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, voterperks.RemindersFile)
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			_, err := voterperks.OpenFileReminders(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path)
		})
	}
}

// TestFileRemindersWriteFailureKeepsTheOldChoice: a choice that could not be
// written is not reported as made.
func TestFileRemindersWriteFailureKeepsTheOldChoice(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root writes into a read-only directory")
	}
	ctx := context.Background()
	dir := t.TempDir()
	r, err := voterperks.OpenFileReminders(dir)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	require.Error(t, r.SetReminder(ctx, "300000000000000001", true))
	got, _, err := r.Reminder(ctx, "300000000000000001")
	require.NoError(t, err)
	assert.False(t, got)
}

// TestFleetRemindersShared: in fleet mode the opt-ins live in Redis, so an
// opt-in taken by one process (where the /vote interaction landed) is seen by
// another (the leader, which sends the reminder at expiry). The set the bot
// kept before 0.3.0 still counts: an upgrade keeps the opt-ins.
func TestFleetRemindersShared(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	open := func() *fleet.Reminders {
		f, err := fleet.New(srv.Client(t), fleet.Config{Bot: "b", ShardCount: 1})
		require.NoError(t, err)
		return f.Reminders()
	}
	follower, leader := open(), open()
	require.NoError(t, follower.SetReminder(ctx, "300000000000000001", true))
	on, _, err := leader.Reminder(ctx, "300000000000000001")
	require.NoError(t, err)
	assert.True(t, on, "the leader does not see a follower's opt-in")
	require.NoError(t, leader.SetReminder(ctx, "300000000000000001", false))
	on, _, err = follower.Reminder(ctx, "300000000000000001")
	require.NoError(t, err)
	assert.False(t, on)

	require.NoError(t, srv.Client(t).SAdd(ctx, fleet.Key("b", "set:reminders"), "300000000000000002").Err())
	on, _, err = leader.Reminder(ctx, "300000000000000002")
	require.NoError(t, err)
	assert.True(t, on, "an opt-in of the bot's earlier set was lost")
}
