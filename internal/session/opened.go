// Package session answers what the module's packages ask of a discordgo
// session they did not open: whether it was opened (so that a handler added
// now may miss its READY).
package session

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Opened reports whether s is open, being opened, or was opened before: a
// session whose READY a handler added now may never see. It reads what
// discordgo v0.29 exposes:
//
//   - Open and Close hold the session's write lock for their whole run
//     (Open dispatches READY inside it), so a failed TryRLock means one is
//     under way;
//   - Open reads READY before it returns and State stores READY's session
//     id and user whether or not state tracking is on; discordgo keeps
//     them after Close, so a session opened before shows them too (and its
//     next Open resumes, with no READY);
//   - DataReady is set once the first heartbeat went out.
//
// A caller that needs READY adds its handler first and asks after: an Open
// that takes the lock after this check dispatches READY to that handler, and
// one that took it before is seen here. A session built without
// discordgo.New may have no State yet; it has not been opened (Open makes
// one). A nil session is not opened.
func Opened(s *discordgo.Session) bool {
	if s == nil {
		return false
	}
	if !s.TryRLock() {
		return true
	}
	st, dataReady := s.State, s.DataReady
	s.RUnlock()
	if dataReady {
		return true
	}
	if st == nil {
		return false
	}
	st.RLock()
	defer st.RUnlock()
	return st.Ready.SessionID != "" || st.Ready.User != nil
}

// OpenGrace is how long a job waits for its attached sessions to be opened
// before it warns about those that are not: a bot that attaches its sessions
// but never opens them gets no READY, so nothing is counted or published,
// and without the warning it would learn that only from the ready timeout,
// minutes later.
const OpenGrace = 10 * time.Second

// WarnUnopened logs one warning naming the shards of the sessions that are
// not opened (see [Opened]), and reports whether there were any.
func WarnUnopened(ctx context.Context, log *slog.Logger, sessions []*discordgo.Session) bool {
	var ids []int
	for _, s := range sessions {
		if !Opened(s) {
			ids = append(ids, s.ShardID)
		}
	}
	if len(ids) == 0 {
		return false
	}
	slices.Sort(ids)
	log.LogAttrs(ctx, slog.LevelWarn, "sessions attached but not opened: no READY, so nothing is counted or published for their shards until Open is called on them",
		slog.Any("shards", ids), slog.Duration("waited", OpenGrace))
	return true
}
