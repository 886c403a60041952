package topggtest

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/topgg"
)

const (
	votersMax     = 1000
	checkLookback = 12 * time.Hour
)

// legacyVoters serves GET /bots/:id/votes: the last 1,000 unique voters
// (PlatformID), most recent first, named after their id.
func (s *Server) legacyVoters(c *call) {
	if !s.ownBotOnly(c) {
		return
	}
	out := []topgg.Voter{}
	seen := map[string]bool{}
	s.mu.Lock()
	for i := len(s.votes) - 1; i >= 0 && len(out) < votersMax; i-- {
		id := s.votes[i].PlatformID
		if seen[id] {
			continue
		}
		seen[id] = true
		sum := sha256.Sum256([]byte(id))
		out = append(out, topgg.Voter{Username: "voter" + id, ID: id, Avatar: hex.EncodeToString(sum[:16])})
	}
	s.mu.Unlock()
	writeJSON(c.w, http.StatusOK, out)
}

// legacyCheck serves GET /bots/:id/check: 1 if the user voted in the past 12 hours.
func (s *Server) legacyCheck(c *call) {
	if !s.ownBotOnly(c) {
		return
	}
	userID := c.r.URL.Query().Get("userId")
	if userID == "" {
		writeLegacyError(c.w, http.StatusBadRequest, "userId is required")
		return
	}
	since := c.now.Add(-checkLookback)
	voted := 0
	s.mu.Lock()
	if slices.ContainsFunc(s.votes, func(v storedVote) bool { return v.PlatformID == userID && v.CreatedAt.After(since) }) {
		voted = 1
	}
	s.mu.Unlock()
	writeJSON(c.w, http.StatusOK, map[string]int{"voted": voted})
}

// weekend serves GET /weekend: true from Friday to Sunday (UTC, the server
// clock), when Top.gg counts votes twice.
func (s *Server) weekend(c *call) {
	d := c.now.UTC().Weekday()
	writeJSON(c.w, http.StatusOK, map[string]bool{"is_weekend": d == time.Friday || d == time.Saturday || d == time.Sunday})
}
