package plugin

import (
	"context"
	"sync"

	"github.com/dblkit/go-topgg/voterperks"
)

// reminderKeeper is a vote store that also keeps the reminder opt-ins, beside
// the votes (*pgstore.Store): whichever backend keeps the votes keeps the
// opt-ins. The plugin asks for them through this interface rather than by
// the store's type, so that a bot without PostgreSQL does not link pgx.
type reminderKeeper interface {
	OpenReminders(ctx context.Context) (voterperks.ReminderStore, error)
}

// storeReminders are the opt-ins of a reminderKeeper, opened on first use:
// opening does I/O (PostgreSQL's makes its table), which New does not. A
// failed first use (the database down) is tried again at the next call, not
// remembered.
type storeReminders struct {
	open func(context.Context) (voterperks.ReminderStore, error)
	mu   sync.Mutex
	r    voterperks.ReminderStore
}

func (l *storeReminders) get(ctx context.Context) (voterperks.ReminderStore, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r == nil {
		r, err := l.open(ctx)
		if err != nil {
			return nil, err
		}
		l.r = r
	}
	return l.r, nil
}

func (l *storeReminders) SetReminder(ctx context.Context, userID string, on bool) error {
	r, err := l.get(ctx)
	if err != nil {
		return err
	}
	return r.SetReminder(ctx, userID, on)
}

func (l *storeReminders) Reminder(ctx context.Context, userID string) (bool, string, error) {
	r, err := l.get(ctx)
	if err != nil {
		return false, "", err
	}
	return r.Reminder(ctx, userID)
}

func (l *storeReminders) Reminded(ctx context.Context, userID, key string) error {
	r, err := l.get(ctx)
	if err != nil {
		return err
	}
	return r.Reminded(ctx, userID, key)
}
