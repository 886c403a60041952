package topggtest

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/dblkit/go-topgg/topgg"
)

const voteLifetime = 12 * time.Hour

// Bases of the ids AddVote makes up for a vote without them.
const (
	defaultUserIDBase     = 799000000000000000
	defaultPlatformIDBase = 599000000000000000
)

// Vote is one vote for the project, served by the v1 vote history and
// lookup and the v0 voters list and check: the client's own type.
type Vote = topgg.Vote

// storedVote orders votes by (CreatedAt, insertion seq): a cursor is a
// position in that order, stable under inserts.
type storedVote struct {
	Vote
	position
}

// AddVote records votes, in order, and delivers their webhooks. Defaults:
// UserID and PlatformID snowflakes made from the vote's number (Top.gg serves
// no vote without them), Weight 1, CreatedAt the server clock, ExpiresAt 12h
// later. As on Top.gg, a later vote dated before a cursor's position is not
// served from it.
func (s *Server) AddVote(votes ...Vote) {
	for _, v := range votes {
		s.addVote(v, "")
	}
}

// AddVoteQuery records v as AddVote does; its webhooks carry query, the vote
// page URL's query string ("ref=abc").
func (s *Server) AddVoteQuery(query string, v Vote) { s.addVote(v, query) }

func (s *Server) addVote(v Vote, query string) {
	v.Weight = cmp.Or(v.Weight, 1)
	if v.CreatedAt.IsZero() {
		v.CreatedAt = s.now()
	}
	if v.ExpiresAt.IsZero() {
		v.ExpiresAt = v.CreatedAt.Add(voteLifetime)
	}
	// Drop the monotonic reading: votes are wall-clock facts.
	v.CreatedAt, v.ExpiresAt = v.CreatedAt.Round(0), v.ExpiresAt.Round(0)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.voteSeq++
	if v.UserID == "" {
		v.UserID = strconv.FormatInt(defaultUserIDBase+s.voteSeq, 10)
	}
	if v.PlatformID == "" {
		v.PlatformID = strconv.FormatInt(defaultPlatformIDBase+s.voteSeq, 10)
	}
	sv := storedVote{Vote: v, position: position{nano: v.CreatedAt.UnixNano(), seq: s.voteSeq}}
	i := sort.Search(len(s.votes), func(i int) bool { return s.votes[i].nano > sv.nano })
	s.votes = slices.Insert(s.votes, i, sv)
	s.deliverVote(sv.Vote, query, sv.seq)
}

// Votes returns every recorded vote, ordered by CreatedAt (then insertion).
func (s *Server) Votes() []Vote {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Vote, len(s.votes))
	for i, v := range s.votes {
		out[i] = v.Vote
	}
	return out
}

// listVotes serves GET /v1/projects/@me/votes.
func (s *Server) listVotes(c *call) {
	q := c.r.URL.Query()
	cursor, rawStart := q.Get("cursor"), q.Get("startDate")
	start, startErr := parseISOTime(rawStart)
	from, ok := s.decodeCursor(cursor)
	status, msg := http.StatusBadRequest, ""
	switch {
	case cursor != "" && !ok:
		msg = "the cursor is invalid or has expired; restart from a startDate"
	case cursor != "":
	case rawStart == "":
		msg = "startDate is required when no cursor is given"
	case startErr != nil:
		msg = "startDate must be an ISO 8601 timestamp"
	case start.Before(c.now.AddDate(-1, 0, 0)):
		status, msg = http.StatusUnprocessableEntity, "startDate must not be more than one year in the past"
	default:
		from = position{nano: start.UnixNano(), seq: -1} // just before every vote at startDate
	}
	if msg != "" {
		writeProblem(c.w, status, msg)
		return
	}

	s.mu.Lock()
	i := sort.Search(len(s.votes), func(i int) bool { return s.votes[i].after(from) })
	end := min(i+s.cfg.pageSize, len(s.votes))
	page := topgg.VotePage{Votes: make([]Vote, 0, end-i)}
	for _, v := range s.votes[i:end] {
		v.CreatedAt, v.ExpiresAt = v.CreatedAt.UTC(), v.ExpiresAt.UTC() // as served
		page.Votes = append(page.Votes, v.Vote)
		from = v.position
	}
	// An opaque cursor; the epoch ties it to the current ExpireCursors generation.
	page.Cursor = base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "tg1:%d:%d:%d", s.cursorEpoch, from.nano, from.seq))
	s.mu.Unlock()

	writeJSON(c.w, http.StatusOK, page)
}

// voteStatus serves GET /v1/projects/@me/votes/:user_id: the latest active vote.
func (s *Server) voteStatus(c *call) {
	src := c.r.URL.Query().Get("source")
	if src != "" && src != "topgg" && src != "discord" {
		writeProblem(c.w, http.StatusBadRequest, "source must be topgg or discord")
		return
	}
	var found *Vote
	s.mu.Lock()
	for _, v := range slices.Backward(s.votes) {
		id := v.UserID
		if src == "discord" {
			id = v.PlatformID
		}
		if id == c.param && v.ExpiresAt.After(c.now) {
			found = &v.Vote
			break
		}
	}
	s.mu.Unlock()

	if found == nil {
		writeProblem(c.w, http.StatusNotFound, "no active vote for this user")
		return
	}
	// Without ids, as served.
	writeJSON(c.w, http.StatusOK, Vote{CreatedAt: found.CreatedAt.UTC(), ExpiresAt: found.ExpiresAt.UTC(), Weight: found.Weight})
}

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
