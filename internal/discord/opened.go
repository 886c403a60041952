// This file: answers what the module's packages ask of a discordgo
// session they did not open: whether it was opened (so that a handler added
// now may miss its READY).

package discord

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Opened reports whether s is open, being opened, or was opened before: a
// session whose READY a handler added now may never see. A caller that needs
// READY adds its handler first and asks after. A nil session is not opened.
func Opened(s *discordgo.Session) bool {
	// discordgo v0.29: Open and Close hold the write lock for their whole run;
	// State keeps READY's session id and user, even after Close; DataReady is
	// set once the first heartbeat went out. A session without State was
	// never opened.
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
// before it warns about those that are not.
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
