package boltstate

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/dblkit/go-topgg/internal/discord"
)

// moveLegacy moves into tx the entries of older releases' files beside
// voterewards.db, each only where its bucket has none, and returns the files
// to remove once tx commits (a crash between repeats the move harmlessly).
func moveLegacy(tx *bolt.Tx, dir string) ([]string, error) {
	var moved []string
	for _, f := range []struct {
		name, bucket string
		decode       func([]byte) (map[string]string, error)
	}{{"commands.sha256", bucketCommands, decodeHash}, {"reminders.json", bucketReminders, decodeReminders}} {
		path := filepath.Join(dir, f.name)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		var entries map[string]string
		if err == nil {
			entries, err = f.decode(b)
		}
		if err != nil {
			return nil, fmt.Errorf("boltstate: %s is damaged or of an unknown version (move it away to start without what it keeps): %w", path, err)
		}
		bucket := tx.Bucket([]byte(f.bucket))
		for k, v := range entries {
			if !has(bucket, k) {
				if err := bucket.Put([]byte(k), []byte(v)); err != nil {
					return nil, fmt.Errorf("boltstate: moving %s: %w", path, err)
				}
			}
		}
		moved = append(moved, path)
	}
	return moved, nil
}

// removeLegacy removes the files moveLegacy moved, and syncs dir.
func removeLegacy(dir string, paths []string) error {
	for _, p := range paths {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("boltstate: removing a file moved into the state: %w", err)
		}
	}
	// Removals are durable once the directory is synced; not every
	// platform can, and a file that comes back undoes nothing.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// decodeHash reads the command hash file of older releases: a sha256 hex digest, a newline.
func decodeHash(b []byte) (map[string]string, error) {
	h := strings.TrimSpace(string(b))
	if _, err := hex.DecodeString(h); err != nil || len(h) != 64 {
		return nil, errors.New("it does not hold a sha256 hex digest")
	}
	return map[string]string{keyHash: h}, nil
}

// decodeReminders reads voterperks' file of opt-ins: version 1 lists the
// users, version 2 maps each to the key of the last vote reminded.
func decodeReminders(b []byte) (map[string]string, error) {
	var doc struct {
		Version int             `json:"version"`
		Users   json.RawMessage `json:"users"`
	}
	last, users := map[string]string{}, []string(nil)
	err := json.Unmarshal(b, &doc)
	switch {
	case err != nil:
	case doc.Version == 1:
		err = json.Unmarshal(doc.Users, &users)
	case doc.Version == 2:
		err = json.Unmarshal(doc.Users, &last)
	default:
		err = fmt.Errorf("version %d", doc.Version)
	}
	for _, u := range users {
		last[u] = ""
	}
	for u := range last {
		if err == nil && !discord.ValidID(u) {
			err = fmt.Errorf("%q is not a Discord id", u)
		}
	}
	return last, err
}
