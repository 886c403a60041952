package topggtest

import (
	"net/http"
	"strconv"
	"time"
)

// legacyLimited applies the v0 limit as a sliding window over the accepted
// requests and answers 429 when it is spent. (The service also blocks for an
// hour once exceeded; the fake does not.)
func (s *Server) legacyLimited(w http.ResponseWriter, now time.Time) bool {
	n, win := s.cfg.legacyLimit, s.cfg.legacyWin
	if n <= 0 || win <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cut := now.Add(-win)
	i := 0
	for i < len(s.legacyHits) && !s.legacyHits[i].After(cut) {
		i++
	}
	s.legacyHits = s.legacyHits[i:]
	if len(s.legacyHits) < n {
		s.legacyHits = append(s.legacyHits, now)
		return false
	}
	secs := retryAfterSeconds(s.legacyHits[0].Add(win).Sub(now))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeTooMany(w, "/bots", secs, "")
	return true
}
