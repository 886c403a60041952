package topggtest

import (
	"encoding/base64"
	"fmt"
)

// position is a point in the (CreatedAt, insertion) order; a cursor is "after it".
type position struct {
	nano int64
	seq  int64
}

func (p position) after(q position) bool {
	return p.nano > q.nano || (p.nano == q.nano && p.seq > q.seq)
}

func (s *Server) decodeCursor(c string) (position, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return position{}, false
	}
	var epoch int64
	var p position
	var rest string
	n, _ := fmt.Sscanf(string(raw), "tg1:%d:%d:%d%s", &epoch, &p.nano, &p.seq, &rest)
	if n != 3 {
		return position{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.cursorEpoch {
		return position{}, false
	}
	return p, true
}

// ExpireCursors makes every cursor issued so far invalid (400), to test a
// client's fallback to startDate.
func (s *Server) ExpireCursors() {
	s.mu.Lock()
	s.cursorEpoch++
	s.mu.Unlock()
}
