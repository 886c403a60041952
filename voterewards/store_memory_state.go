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
func (s *memoryStore) LoadHash(ctx context.Context) (string, error) {
	if err := s.lock(ctx); err != nil {
		return "", err
	}
	defer s.mu.Unlock()
	return s.hash, nil
}

// SaveHash implements [State].
func (s *memoryStore) SaveHash(ctx context.Context, hash string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.hash = hash
	return nil
}

// SetReminder implements [ReminderStore].
func (s *memoryStore) SetReminder(ctx context.Context, userID string, on bool) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.remind[userID]; on && !ok {
		s.remind[userID] = ""
	} else if !on {
		delete(s.remind, userID)
	}
	return nil
}

// Reminder implements [ReminderStore].
func (s *memoryStore) Reminder(ctx context.Context, userID string) (bool, string, error) {
	if err := s.lock(ctx); err != nil {
		return false, "", err
	}
	defer s.mu.Unlock()
	last, on := s.remind[userID]
	return on, last, nil
}

// Reminded implements [ReminderStore].
func (s *memoryStore) Reminded(ctx context.Context, userID, key string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, on := s.remind[userID]; on {
		s.remind[userID] = key
	}
	return nil
}
