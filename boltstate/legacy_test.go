package boltstate_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
)

// The files older releases kept beside voterewards.db, written as they wrote
// them: the command hash (of commands.NewFileHashStore, since removed), voterperks.FileReminders' opt-ins
// (version 2) and the example bot's before it (version 1).
const (
	hashFile      = "commands.sha256"
	remindersFile = "reminders.json"
)

func writeHashFile(t *testing.T, dir, hash string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, hashFile), []byte(hash+"\n"), 0o600))
}

func writeRemindersV1(t *testing.T, dir string, users ...string) {
	t.Helper()
	b, err := json.Marshal(struct {
		Version int      `json:"version"`
		Users   []string `json:"users"`
	}{1, users})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, remindersFile), b, 0o600))
}

func writeRemindersV2(t *testing.T, dir string, last map[string]string) {
	t.Helper()
	users, err := json.Marshal(last)
	require.NoError(t, err)
	b, err := json.Marshal(struct {
		Version int             `json:"version"`
		Users   json.RawMessage `json:"users"`
	}{2, users})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, remindersFile), b, 0o600))
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// optIn is a user's reminder state.
type optIn struct {
	on   bool
	last string
}

// requireOptIns checks each user's reminder state in s.
func requireOptIns(t *testing.T, s *boltstate.State, want map[string]optIn) {
	t.Helper()
	for user, w := range want {
		on, last, err := s.Reminder(t.Context(), user)
		require.NoError(t, err)
		assert.Equal(t, w, optIn{on, last}, user)
	}
}

// TestOpenMovesLegacyFiles: at the first Open, the command hash and the
// opt-ins (versions 1 and 2) move into the state and their files go; the
// state then keeps them across a reopen.
func TestOpenMovesLegacyFiles(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		write func(t *testing.T, dir string)
		want  map[string]optIn
	}{
		"version 1": {func(t *testing.T, dir string) { writeRemindersV1(t, dir, "7", "8") },
			map[string]optIn{"7": {true, ""}, "8": {true, ""}, "9": {}}},
		"version 2": {func(t *testing.T, dir string) { writeRemindersV2(t, dir, map[string]string{"1": "1@k", "2": ""}) },
			map[string]optIn{"1": {true, "1@k"}, "2": {true, ""}, "3": {}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeHashFile(t, dir, sha("commands"))
			tc.write(t, dir)
			s, err := boltstate.Open(dir)
			require.NoError(t, err)
			assert.NoFileExists(t, filepath.Join(dir, hashFile))
			assert.NoFileExists(t, filepath.Join(dir, remindersFile))
			hash, err := s.LoadHash(t.Context())
			require.NoError(t, err)
			assert.Equal(t, sha("commands"), hash)
			requireOptIns(t, s, tc.want)
			require.NoError(t, s.Close())

			s = open(t, dir)
			hash, err = s.LoadHash(t.Context())
			require.NoError(t, err)
			assert.Equal(t, sha("commands"), hash, "kept across a reopen")
			requireOptIns(t, s, tc.want)
		})
	}
}

// TestOpenMovesLegacyFilesAgainAfterACrash: a crash after the move's commit
// and before the files' removal leaves both; the next Open moves the same
// content again without doubling or undoing anything, and removes the files.
func TestOpenMovesLegacyFilesAgainAfterACrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	last := map[string]string{"1": "1@k", "2": ""}
	writeHashFile(t, dir, sha("v1"))
	writeRemindersV2(t, dir, last)
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	// The files as the crash left them.
	writeHashFile(t, dir, sha("v1"))
	writeRemindersV2(t, dir, last)

	s = open(t, dir)
	assert.NoFileExists(t, filepath.Join(dir, hashFile))
	assert.NoFileExists(t, filepath.Join(dir, remindersFile))
	hash, err := s.LoadHash(t.Context())
	require.NoError(t, err)
	assert.Equal(t, sha("v1"), hash)
	requireOptIns(t, s, map[string]optIn{"1": {true, "1@k"}, "2": {true, ""}, "3": {}})

	// A file that came back after later changes undoes none of them.
	ctx := t.Context()
	require.NoError(t, s.SaveHash(ctx, sha("v2")))
	require.NoError(t, s.Reminded(ctx, "2", "2@k"))
	require.NoError(t, s.Close())
	writeHashFile(t, dir, sha("v1"))
	writeRemindersV2(t, dir, last)
	s = open(t, dir)
	hash, err = s.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, sha("v2"), hash)
	requireOptIns(t, s, map[string]optIn{"1": {true, "1@k"}, "2": {true, "2@k"}})
}

// TestOpenRefusesDamagedLegacyFiles: a legacy file Open cannot read is an
// error naming it, never dropped: the state opens once it is moved away.
func TestOpenRefusesDamagedLegacyFiles(t *testing.T) {
	t.Parallel()
	for _, bad := range []struct{ file, content string }{
		{remindersFile, `{`},
		{remindersFile, `{"version":3,"users":{}}`},
		{remindersFile, `{"version":2,"users":{"x":""}}`},
		{remindersFile, `{"version":1,"users":["alice"]}`},
		{remindersFile, `{"version":1,"users":{"1":""}}`},
		{hashFile, "not a hash\n"},
		{hashFile, ""},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, bad.file)
		require.NoError(t, os.WriteFile(path, []byte(bad.content), 0o600))
		_, err := boltstate.Open(dir)
		require.Error(t, err, "%s: %q", bad.file, bad.content)
		assert.ErrorContains(t, err, path, "%q: the error names the file", bad.content)
		assert.FileExists(t, path, "the file is kept")

		require.NoError(t, os.Rename(path, path+".aside"))
		s, err := boltstate.Open(dir)
		require.NoError(t, err, "the state is not held open by the refusal")
		require.NoError(t, s.Close())
	}
}
