package topggtest

import "time"

// legacyLimited applies the v0 limit as a sliding window over the accepted
// requests and reports how long to wait when it is spent. (The service also
// blocks for an hour once exceeded; the fake does not.)
func (s *Server) legacyLimited(now time.Time) (time.Duration, bool) {
	n, win := s.cfg.legacyLimit, s.cfg.legacyWin
	if n <= 0 || win <= 0 {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cut := now.Add(-win)
	i := 0
	for i < len(s.legacyHits) && !s.legacyHits[i].After(cut) {
		i++
	}
	s.legacyHits = s.legacyHits[i:]
	if len(s.legacyHits) >= n {
		return s.legacyHits[0].Add(win).Sub(now), true
	}
	s.legacyHits = append(s.legacyHits, now)
	return 0, false
}
