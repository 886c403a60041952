package plugin

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/voterperks"
)

// TestStoreRemindersOpensOnFirstUseAndRetriesAFailure: the opt-ins of a
// vote store that keeps them are opened at the first call, not by New; a
// failed open (the database down) is that call's error and is tried again
// at the next call; once open, they are not opened again.
func TestStoreRemindersOpensOnFirstUseAndRetriesAFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	down := errors.New("database down")
	files, err := voterperks.OpenFileReminders(t.TempDir())
	require.NoError(t, err)
	opens := 0
	r := &storeReminders{open: func(context.Context) (voterperks.ReminderStore, error) {
		opens++
		if opens == 1 {
			return nil, down
		}
		return files, nil
	}}
	require.ErrorIs(t, r.SetReminder(ctx, "1", true), down)
	require.NoError(t, r.SetReminder(ctx, "1", true), "the failed open was not tried again")
	on, last, err := r.Reminder(ctx, "1")
	require.NoError(t, err)
	assert.True(t, on)
	assert.Empty(t, last)
	require.NoError(t, r.Reminded(ctx, "1", "1@k"))
	_, last, err = files.Reminder(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, "1@k", last, "the calls reach the opened store")
	assert.Equal(t, 2, opens, "opened again after it succeeded")
}

// TestVoteStoreKeepsReminders: a vote store with OpenReminders keeps the
// opt-ins; one without does not.
func TestVoteStoreKeepsReminders(t *testing.T) {
	t.Parallel()
	assert.False(t, keepsReminders(nil))
	assert.False(t, keepsReminders(struct{}{}))
	assert.True(t, keepsReminders(keeper{}))
}

type keeper struct{}

func (keeper) OpenReminders(context.Context) (voterperks.ReminderStore, error) { return nil, nil }
