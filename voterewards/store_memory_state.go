package voterewards

import "context"

// UseFence implements [State]: memory is one process's.
func (s *memoryStore) UseFence(f Fence) error {
	if f != nil {
		return ErrNotShared
	}
	return nil
}

// Ping implements [State]: memory always answers.
func (s *memoryStore) Ping(ctx context.Context) error { return ctx.Err() }

// LoadHash implements [State].
func (s *memoryStore) LoadHash(ctx context.Context) (hash string, err error) {
	err = s.with(ctx, func() { hash = s.hash })
	return hash, err
}

// SaveHash implements [State].
func (s *memoryStore) SaveHash(ctx context.Context, hash string) error {
	return s.with(ctx, func() { s.hash = hash })
}

// SetReminder implements [ReminderStore].
func (s *memoryStore) SetReminder(ctx context.Context, userID string, on bool) error {
	return s.with(ctx, func() {
		if _, ok := s.remind[userID]; on && !ok {
			s.remind[userID] = ""
		} else if !on {
			delete(s.remind, userID)
		}
	})
}

// Reminder implements [ReminderStore].
func (s *memoryStore) Reminder(ctx context.Context, userID string) (on bool, last string, err error) {
	err = s.with(ctx, func() { last, on = s.remind[userID] })
	return on, last, err
}

// Reminded implements [ReminderStore].
func (s *memoryStore) Reminded(ctx context.Context, userID, key string) error {
	return s.with(ctx, func() {
		if _, on := s.remind[userID]; on {
			s.remind[userID] = key
		}
	})
}
