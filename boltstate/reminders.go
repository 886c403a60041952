package boltstate

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"
)

// SetReminder implements [voterewards.ReminderStore]; concurrent calls share commits.
func (s *State) SetReminder(ctx context.Context, userID string, on bool) error {
	return s.write(ctx, ride, "record the reminder choice of "+userID, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketReminders))
		switch {
		case !on:
			return b.Delete([]byte(userID))
		case has(b, userID):
			return nil // on again keeps the last vote reminded
		}
		return b.Put([]byte(userID), nil)
	})
}

// Reminder implements [voterewards.ReminderStore].
func (s *State) Reminder(ctx context.Context, userID string) (on bool, last string, err error) {
	err = s.read(ctx, "the reminder choice of "+userID, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketReminders))
		on, last = has(b, userID), string(b.Get([]byte(userID)))
		return nil
	})
	return on, last, err
}

// Reminded implements [voterewards.ReminderStore].
func (s *State) Reminded(ctx context.Context, userID, key string) error {
	return s.write(ctx, ride, "record the reminder of "+key, func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(bucketReminders)); has(b, userID) {
			return b.Put([]byte(userID), []byte(key))
		}
		return nil
	})
}

// has reports whether b holds key, even with an empty value (Get answers nil).
func has(b *bolt.Bucket, key string) bool {
	k, _ := b.Cursor().Seek([]byte(key))
	return k != nil && bytes.Equal(k, []byte(key))
}
