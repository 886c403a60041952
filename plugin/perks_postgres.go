package plugin

import (
	"context"
	"sync"

	"github.com/dblkit/go-topgg/pgstore"
)

// pgReminders keeps the reminder opt-ins in the database of a PostgreSQL
// vote store, beside the votes (whichever backend keeps the votes keeps the
// opt-ins). Its table is made on first use: (*pgstore.Store).Reminders does
// I/O, which New does not. A failed first use (the database down) is tried
// again at the next call, not remembered.
type pgReminders struct {
	store *pgstore.Store
	mu    sync.Mutex
	r     *pgstore.Reminders
}

func (l *pgReminders) open(ctx context.Context) (*pgstore.Reminders, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r == nil {
		r, err := l.store.Reminders(ctx)
		if err != nil {
			return nil, err
		}
		l.r = r
	}
	return l.r, nil
}

func (l *pgReminders) SetReminder(ctx context.Context, userID string, on bool) error {
	r, err := l.open(ctx)
	if err != nil {
		return err
	}
	return r.SetReminder(ctx, userID, on)
}

func (l *pgReminders) Reminder(ctx context.Context, userID string) (bool, string, error) {
	r, err := l.open(ctx)
	if err != nil {
		return false, "", err
	}
	return r.Reminder(ctx, userID)
}

func (l *pgReminders) Reminded(ctx context.Context, userID, key string) error {
	r, err := l.open(ctx)
	if err != nil {
		return err
	}
	return r.Reminded(ctx, userID, key)
}
