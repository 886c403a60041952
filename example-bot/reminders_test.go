package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/plugin"
)

// TestFileRemindersSurviveReopen: opt-ins are durable once SetReminder
// returns, survive a reopen (a restart), and opting out removes them.
func TestFileRemindersSurviveReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	const alice, bob = "300000000000000001", "300000000000000002"
	r, err := openReminders(dir)
	require.NoError(t, err)
	require.NoError(t, r.SetReminder(ctx, alice, true))
	require.NoError(t, r.SetReminder(ctx, bob, true))
	require.NoError(t, r.SetReminder(ctx, bob, false))

	again, err := openReminders(dir)
	require.NoError(t, err)
	for user, want := range map[string]bool{alice: true, bob: false, "300000000000000003": false} {
		got, err := again.WantsReminder(ctx, user)
		require.NoError(t, err)
		assert.Equal(t, want, got, user)
	}
	b, err := os.ReadFile(filepath.Join(dir, remindersFile))
	require.NoError(t, err)
	assert.JSONEq(t, `{"version":1,"users":["`+alice+`"]}`, string(b))
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
			path := filepath.Join(dir, remindersFile)
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			_, err := openReminders(dir)
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
	r, err := openReminders(dir)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	require.Error(t, r.SetReminder(ctx, "300000000000000001", true))
	got, err := r.WantsReminder(ctx, "300000000000000001")
	require.NoError(t, err)
	assert.False(t, got)
}

// TestFleetRemindersShared: in fleet mode the opt-ins live in Redis, so an
// opt-in taken by one process (where the /vote interaction landed) is seen by
// another (the leader, which sends the reminder at expiry); no state file.
func TestFleetRemindersShared(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "never-made")
	cfg := config{Plugin: plugin.Config{StateDir: dir}}
	open := func() reminderStore {
		r, err := openReminderStore(cfg, srv.Client(t), "b")
		require.NoError(t, err)
		return r
	}
	follower, leader := open(), open()
	require.NoError(t, follower.SetReminder(ctx, "300000000000000001", true))
	on, err := leader.WantsReminder(ctx, "300000000000000001")
	require.NoError(t, err)
	assert.True(t, on, "the leader does not see a follower's opt-in")
	// The set the fleet's Set kept before 0.3.0: an upgrade keeps the opt-ins.
	member, err := srv.Client(t).SIsMember(ctx, fleet.Key("b", "set:reminders"), "300000000000000001").Result()
	require.NoError(t, err)
	assert.True(t, member)
	require.NoError(t, leader.SetReminder(ctx, "300000000000000001", false))
	on, err = follower.WantsReminder(ctx, "300000000000000001")
	require.NoError(t, err)
	assert.False(t, on)
	assert.NoDirExists(t, dir, "fleet mode wrote a state file")

	off := config{Plugin: plugin.Config{VotePollInterval: new(time.Duration(0))}}
	r, err := openReminderStore(off, nil, "")
	require.NoError(t, err)
	assert.Nil(t, r, "no reminders without vote polling")
}
