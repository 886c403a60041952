package boltstate_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterewards/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// userID and platformID make distinct snowflake-shaped ids for user n.
func userID(n int) string     { return fmt.Sprintf("7%017d", n) }
func platformID(n int) string { return fmt.Sprintf("3%017d", n) }

// open opens the state in dir, closed at cleanup.
func open(t *testing.T, dir string) *boltstate.State {
	t.Helper()
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func storeVote(u int, created, expires time.Time) voterewards.Vote {
	tv := topgg.Vote{UserID: userID(u), PlatformID: platformID(u), Weight: 1 + u%2, CreatedAt: created.UTC(), ExpiresAt: expires.UTC()}
	return voterewards.Vote{Vote: tv, Origin: voterewards.OriginHistory}
}

func keys(votes []voterewards.Vote) []string {
	out := []string{}
	for _, v := range votes {
		out = append(out, v.Key())
	}
	return out
}

func TestState(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) voterewards.State {
		s, err := boltstate.Open(t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestOpenTwiceIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := boltstate.Open(dir)
	require.NoError(t, err)
	start := time.Now()
	second, err := boltstate.Open(dir)
	require.ErrorIs(t, err, boltstate.ErrLocked)
	assert.Nil(t, second)
	assert.Contains(t, err.Error(), dir)
	assert.Less(t, time.Since(start), 3*time.Second, "fails fast, does not hang")
	require.NoError(t, first.Close())

	again, err := boltstate.Open(dir)
	require.NoError(t, err, "free again once closed")
	require.NoError(t, again.Close())
}

// TestOpenWaitsForAFileBeingWritten: a second opener of a file another
// process is still creating waits for its lock (or is refused with ErrLocked),
// never judges the file half-written as damaged.
func TestOpenWaitsForAFileBeingWritten(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd to see the second opener reach the file")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, boltstate.StoreFile)
	first, err := bolt.Open(path, 0o600, nil) // locked, its first pages written
	require.NoError(t, err)
	before := fdsOn(path)
	opened := make(chan error, 1)
	go func() {
		s, err := boltstate.Open(dir)
		if err == nil {
			err = s.Close()
		}
		opened <- err
	}()
	require.Eventually(t, func() bool { return len(opened) > 0 || fdsOn(path) > before }, 10*time.Second, time.Millisecond,
		"the second opener reaches the file")
	// The first writes on, growing the file, and exits.
	require.NoError(t, first.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("more"))
		if err == nil {
			err = b.Put([]byte("k"), make([]byte, 64<<10))
		}
		return err
	}))
	require.NoError(t, first.Close())
	select {
	case err = <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("the second Open hangs")
	}
	require.NotErrorAs(t, err, new(*boltstate.DamagedError))
	if err != nil {
		require.ErrorIs(t, err, boltstate.ErrLocked)
	}
	open(t, dir) // and the file is sound
}

// fdsOn counts this process's descriptors open on path.
func fdsOn(path string) int {
	fds, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); target == path {
			n++
		}
	}
	return n
}

// TestStateKeptAcrossReopen: what a State held is there after a restart,
// webhook fields and dedup included.
func TestStateKeptAcrossReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	a, b := storeVote(1, now.Add(-2*time.Hour), now.Add(10*time.Hour)), storeVote(2, now.Add(-time.Hour), now.Add(11*time.Hour))
	b.Origin, b.Hook = voterewards.OriginWebhook, &voterewards.Hook{ID: "42", Query: map[string]string{"ref": "x"}}
	cp := voterewards.Checkpoint{Cursor: "c9", LastSeen: now, Since: now.Add(-12 * time.Hour)}
	added, err := s.Ingest(ctx, &cp, []voterewards.Vote{a, b}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.Len(t, added, 2)
	b.Stats = added[1].Stats
	require.Equal(t, 1, b.Stats.Votes, "the vote's Stats are set")
	require.NoError(t, s.Delivered(ctx, a, true))
	require.NoError(t, s.Close())

	s, err = boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "c9", snap.Checkpoint.Cursor)
	assert.True(t, snap.Checkpoint.Since.Equal(cp.Since))
	require.Len(t, snap.Pending, 1)
	assert.Equal(t, b, snap.Pending[0], "votes come back as they went in, with their Stats")
	assert.Equal(t, keys([]voterewards.Vote{a}), keys(snap.Expiries))
	again := storeVote(2, now.Add(-time.Hour+time.Microsecond), now.Add(11*time.Hour))
	added, err = s.Ingest(ctx, nil, []voterewards.Vote{again}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	assert.Empty(t, added, "the dedup index survives the restart")
	st, err := s.Stats(ctx, b.PlatformID)
	require.NoError(t, err)
	assert.Equal(t, b.Stats, st, "the ledger survives the restart")
	board, err := s.Leaderboard(ctx, time.Time{}, 10)
	require.NoError(t, err)
	assert.Len(t, board, 2)
}

// TestUseFence: a directory is one process's: no fence is fine, a fleet's
// is refused.
func TestUseFence(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir())
	require.NoError(t, s.UseFence(nil))
	require.ErrorIs(t, s.UseFence(func() int64 { return 1 }), voterewards.ErrNotShared)
}

// TestStateKeepsHashAndOptInsAcrossReopen: the command hash, the choices and
// the reminders recorded are there after a restart.
func TestStateKeepsHashAndOptInsAcrossReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	require.NoError(t, s.SaveHash(ctx, sha("commands")))
	require.NoError(t, s.SetReminder(ctx, "1", true))
	require.NoError(t, s.SetReminder(ctx, "2", true))
	require.NoError(t, s.Reminded(ctx, "1", "1@k"))
	require.NoError(t, s.Reminded(ctx, "3", "3@k"), "not opted in: nothing recorded")
	require.NoError(t, s.SetReminder(ctx, "1", true), "on again keeps the record")
	require.NoError(t, s.SetReminder(ctx, "2", false))
	require.NoError(t, s.Close())

	s = open(t, dir)
	hash, err := s.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, sha("commands"), hash)
	requireOptIns(t, s, map[string]optIn{"1": {true, "1@k"}, "2": {}, "3": {}})
}

// TestPrintingTheStateWhileItIngestsIsSafe: fmt of a State walked its
// database unlocked while votes were ingested (a data race, under -race).
func TestPrintingTheStateWhileItIngestsIsSafe(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir())
	out := testlog.PrintWhile(func() {
		now := time.Now()
		for n := range 50 {
			tv := topgg.Vote{UserID: fmt.Sprintf("81%016d", n), PlatformID: fmt.Sprintf("31%016d", n), Weight: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
			_, err := s.Ingest(context.Background(), nil, []voterewards.Vote{{Vote: tv, Origin: voterewards.OriginWebhook}}, time.Hour)
			assert.NoError(t, err)
		}
	}, s)
	assert.Contains(t, out, "boltstate.State")
}

// goodStoreFile writes a store with some history and returns its bytes.
func goodStoreFile(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var votes []voterewards.Vote
	for i := range 400 {
		tv := topgg.Vote{UserID: userID(i), PlatformID: platformID(i), Weight: 1, CreatedAt: now.Add(time.Duration(i) * time.Second)}
		tv.ExpiresAt = tv.CreatedAt.Add(voterewards.VoteLifetime)
		votes = append(votes, voterewards.Vote{Vote: tv, Origin: voterewards.OriginHistory})
	}
	ctx := context.Background()
	_, err = s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c", LastSeen: now}, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	for _, v := range votes[:200] {
		require.NoError(t, s.Delivered(ctx, v, true))
	}
	require.NoError(t, s.Close())
	b, err := os.ReadFile(filepath.Join(dir, boltstate.StoreFile))
	require.NoError(t, err)
	return b
}

// withFreelist returns the store file b once bbolt opened it with its
// defaults, which write a freelist page.
func withFreelist(t *testing.T, b []byte) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), boltstate.StoreFile)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// openDamaged writes b as the store file and opens it: it must either open
// (and then load without a crash) or fail with a *DamagedError naming the
// file, or ErrFileTooNew (a flip that raised the version byte looks like a
// newer release's file). It reports whether it was refused.
func openDamaged(t *testing.T, b []byte) bool {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, boltstate.StoreFile)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	if d := os.Getenv("DAMAGED_DUMP"); d != "" {
		_ = os.WriteFile(d, b, 0o600)
	}
	s, err := boltstate.Open(dir)
	if errors.Is(err, boltstate.ErrFileTooNew) {
		return true
	}
	if err != nil {
		var derr *boltstate.DamagedError
		require.ErrorAs(t, err, &derr, "any refusal is a DamagedError: %v", err)
		assert.Equal(t, path, derr.Path)
		assert.Contains(t, err.Error(), path, "the error names the file")
		assert.Contains(t, err.Error(), "move the file aside", "and says what to do")
		return true
	}
	defer s.Close()
	// A file that passed the check is read whole without a crash; a record
	// it cannot decode is an error, not a panic.
	_, _ = s.Load(context.Background())
	_, _ = s.Stats(context.Background(), platformID(7))
	_, _ = s.Leaderboard(context.Background(), time.Time{}, voterewards.MaxLeaderboard)
	_, _ = s.Leaderboard(context.Background(), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), voterewards.MaxLeaderboard)
	return false
}

func TestDamagedFileIsAnErrorNotACrash(t *testing.T) {
	t.Parallel()
	good := goodStoreFile(t)
	require.Greater(t, len(good), 4*4096)
	require.False(t, openDamaged(t, good), "the good file opens")

	t.Run("truncated", func(t *testing.T) {
		// bbolt grows its file ahead of use: cutting the unused tail is no
		// damage, so only cuts into the used half must be refused.
		for _, n := range []int{1, 15, 100, 4095, 4096, 4097, 8191, 8192, 8193, 3 * 4096, len(good) / 3, len(good) / 2} {
			assert.True(t, openDamaged(t, good[:n]), "truncated to %d of %d bytes", n, len(good))
		}
		for _, n := range []int{len(good) - 4096, len(good) - 1} {
			openDamaged(t, good[:n]) // refused or opened: never a crash
		}
	})
	t.Run("zero-length", func(t *testing.T) {
		// An empty file is what a crash right after creating it leaves:
		// bbolt initialises it.
		assert.False(t, openDamaged(t, nil))
	})
	t.Run("garbage", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, n := range []int{10, 4096, 8192, 64 << 10} {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			assert.True(t, openDamaged(t, b), "%d random bytes", n)
		}
	})
	t.Run("flipped", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for range 300 {
			b := append([]byte(nil), good...)
			for range 1 + r.IntN(8) {
				i := r.IntN(len(b))
				b[i] ^= byte(1 + r.IntN(255))
			}
			openDamaged(t, b) // refused or opened: never a crash
		}
		// Both meta pages broken: nothing to trust.
		b := append([]byte(nil), good...)
		b[16+20] ^= 0xff
		b[4096+16+20] ^= 0xff
		assert.True(t, openDamaged(t, b))
	})
	t.Run("freelist", func(t *testing.T) {
		// A tool opening the file with bbolt's defaults writes a freelist
		// page (this package writes none), which bbolt then trusts: it would
		// write over a page in use that the page lists as free.
		b := withFreelist(t, good)
		require.False(t, openDamaged(t, b), "a sound freelist opens")
		le := binary.LittleEndian
		meta := b[16:] // of the last commit: freelist page at 32, txid at 48
		if le.Uint64(b[4096+16+48:]) > le.Uint64(meta[48:]) {
			meta = b[4096+16:]
		}
		at := int(le.Uint64(meta[32:])) * 4096
		for name, free := range map[string]uint64{"the root page": le.Uint64(meta[16:]), "a page past the last": le.Uint64(meta[40:])} {
			d := append([]byte(nil), b...)
			le.PutUint16(d[at+10:], 1)
			le.PutUint64(d[at+16:], free)
			assert.True(t, openDamaged(t, d), "a freelist listing %s", name)
		}
	})
	t.Run("zeroed pages", func(t *testing.T) {
		for page := 2; page*4096 < len(good); page++ {
			b := append([]byte(nil), good...)
			clear(b[page*4096 : (page+1)*4096])
			openDamaged(t, b)
		}
	})
}

func TestDamagedErrorMatches(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("wrapped: %w", &boltstate.DamagedError{Path: "/x/voterewards.db", Reason: "r"})
	var derr *boltstate.DamagedError
	require.ErrorAs(t, err, &derr)
	assert.Equal(t, "/x/voterewards.db", derr.Path)
}

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
