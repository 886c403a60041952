package voterperks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/dblkit/go-topgg/internal/snowflake"
	"github.com/dblkit/go-topgg/topgg"
)

// RemindersFile is the name of the opt-ins' file in a state directory.
const RemindersFile = "reminders.json"

// FileReminders is a [ReminderStore] in one JSON file of a bot's state
// directory, for a bot in one process: rewritten whole and atomically on each
// change (a crash leaves the old content or the new), synced, and kept in
// memory. A write per opt-in and per reminder is fine at the pace of votes.
// Make it with [OpenFileReminders]; safe for concurrent use.
type FileReminders struct {
	path string
	mu   sync.Mutex        // held across a write: writes are serialised
	last map[string]string // opted-in user -> key of the last vote reminded
}

var _ ReminderStore = (*FileReminders)(nil)

// remindersDoc is the file's content. Version 1 (the example bot's) listed
// the users only; version 2 keeps the last vote reminded beside each.
type remindersDoc struct {
	Version int             `json:"version"`
	Users   json.RawMessage `json:"users"`
}

// OpenFileReminders reads the opt-ins kept in dir's [RemindersFile] (none
// without the file; the directory is created on the first write). A file it
// cannot read is an error naming it: the opt-ins are never silently
// forgotten.
func OpenFileReminders(dir string) (*FileReminders, error) {
	f := &FileReminders{path: filepath.Join(dir, RemindersFile), last: map[string]string{}}
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("voterperks: reading %s: %w", f.path, err)
	}
	if err := f.decode(b); err != nil {
		return nil, fmt.Errorf("voterperks: %s is damaged or of an unknown version (move it away to start without the opt-ins): %w", f.path, err)
	}
	return f, nil
}

// decode reads a version 1 or 2 document into f.last.
func (f *FileReminders) decode(b []byte) error {
	var doc remindersDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	switch doc.Version {
	case 1:
		var users []string
		if err := json.Unmarshal(doc.Users, &users); err != nil {
			return err
		}
		for _, u := range users {
			f.last[u] = ""
		}
	case 2:
		if err := json.Unmarshal(doc.Users, &f.last); err != nil {
			return err
		}
	default:
		return fmt.Errorf("version %d", doc.Version)
	}
	for u := range f.last {
		if !snowflake.Valid(u) {
			return fmt.Errorf("%q is not a Discord id", u)
		}
	}
	return nil
}

// SetReminder writes nothing for an unchanged choice.
func (f *FileReminders) SetReminder(ctx context.Context, userID string, on bool) error {
	return f.change(ctx, func(m map[string]string) bool {
		if _, ok := m[userID]; ok == on {
			return false
		}
		if on {
			m[userID] = ""
		} else {
			delete(m, userID)
		}
		return true
	})
}

// Reminder reads from memory.
func (f *FileReminders) Reminder(_ context.Context, userID string) (on bool, last string, err error) {
	if f == nil || f.path == "" {
		return false, "", errNotMadeFile
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	last, on = f.last[userID]
	return on, last, nil
}

// Reminded writes nothing for a user who opted out, or was reminded of key.
func (f *FileReminders) Reminded(ctx context.Context, userID, key string) error {
	return f.change(ctx, func(m map[string]string) bool {
		if last, ok := m[userID]; !ok || last == key {
			return false
		}
		m[userID] = key
		return true
	})
}

// change applies edit to a copy of the opt-ins and, if it changed them,
// writes the file, then keeps the copy.
func (f *FileReminders) change(ctx context.Context, edit func(map[string]string) bool) error {
	if f == nil || f.path == "" {
		return errNotMadeFile
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	next := maps.Clone(f.last)
	if !edit(next) {
		return nil
	}
	users, err := json.Marshal(next)
	if err == nil {
		err = writeFileAtomic(f.path, remindersDoc{Version: 2, Users: users})
	}
	if err != nil {
		return fmt.Errorf("voterperks: writing %s: %w", f.path, err)
	}
	f.last = next
	return nil
}

var errNotMadeFile = fmt.Errorf("voterperks: FileReminders %w (voterperks.OpenFileReminders)", topgg.ErrNotConfigured)

// writeFileAtomic replaces path with v as JSON: a synced temporary file
// renamed over path, and the directory synced so that the rename survives a
// power cut.
func writeFileAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
