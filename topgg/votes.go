package topgg

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// Vote is one vote of the project's vote history.
type Vote struct {
	// UserID is the voter's Top.gg user id.
	UserID string `json:"user_id"`
	// PlatformID is the voter's id on the project's platform (the Discord user id).
	PlatformID string `json:"platform_id"`
	// Weight is how many votes this one counts for (2 on weekend-bonus votes).
	Weight    int       `json:"weight"`
	CreatedAt time.Time `json:"created_at"`
	// ExpiresAt is when the user may vote again; the vote is active until then.
	ExpiresAt time.Time `json:"expires_at"`
}

// ActiveAt reports whether the vote is still active at t.
func (v Vote) ActiveAt(t time.Time) bool { return t.Before(v.ExpiresAt) }

// VotePage is one page of the vote history, oldest vote first.
type VotePage struct {
	// Cursor reads the next page. It may be present, even "", on the last page.
	Cursor string `json:"cursor"`
	// Votes is empty once the history is read to its end.
	Votes []Vote `json:"data"`
}

// VotesQuery selects a page of votes: by Cursor, or, without one, from StartDate.
type VotesQuery struct {
	// Cursor is an opaque value from a previous page; it takes precedence over StartDate.
	Cursor string
	// StartDate is where the history starts when there is no cursor; it may not be
	// more than one year in the past.
	StartDate time.Time
}

// votesFamily is the rate-limit family of both vote routes, [Client.Votes] and
// [Client.VoteStatus], on purpose: the service publishes no per-route v1 limits,
// its v1 limits count per project, and the two routes read the same vote data, so a
// 429 on one most likely means the other would get one too. Sharing the block
// costs at most a wait the service asked for; splitting it would spend a request
// per route to learn the same block again.
const votesFamily = "v1:votes"

// Votes returns one page of the vote history (GET /v1/projects/@me/votes).
//
// It shares its rate-limit block with [Client.VoteStatus]: a block one of them
// learns from a 429 refuses calls of both, locally, until it ends.
func (c *Client) Votes(ctx context.Context, q VotesQuery) (*VotePage, error) {
	if err := q.validate(time.Now()); err != nil {
		return nil, err
	}
	var query string
	if q.Cursor != "" {
		query = "cursor=" + url.QueryEscape(q.Cursor)
	} else {
		query = "startDate=" + url.QueryEscape(q.StartDate.UTC().Format(time.RFC3339Nano))
	}
	var p VotePage
	if _, err := c.do(ctx, &call{method: http.MethodGet, path: c.project.v1Path("/votes"), query: query, idempotent: true, family: votesFamily, route: RouteVotes}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// AllVotes iterates over every vote since since, oldest first, following the cursor
// page by page until a page comes back empty (or without a cursor to follow). A
// failure is yielded once, as the last element. Stopping the loop early sends no
// further request. Each iteration of the returned sequence starts over from since.
//
// The walk always ends: when the service's answers would keep it going (a cursor
// that does not advance or comes back after other pages, a page that repeats an
// earlier page's votes under a new cursor), the votes of the offending page are
// yielded and then a *[PaginationError] (matching [ErrPagination]) ends it.
func (c *Client) AllVotes(ctx context.Context, since time.Time) iter.Seq2[Vote, error] {
	return func(yield func(Vote, error) bool) {
		guard := newPageGuard(http.MethodGet + " " + c.project.v1Path("/votes"))
		q := VotesQuery{StartDate: since}
		for {
			page, err := c.Votes(ctx, q)
			if err != nil {
				yield(Vote{}, err)
				return
			}
			if len(page.Votes) == 0 {
				return
			}
			for _, v := range page.Votes {
				if !yield(v, nil) {
					return
				}
			}
			if page.Cursor == "" {
				// Nothing further can be asked for; the service marks the end with
				// an empty page, but a last page without a cursor ends it as well.
				return
			}
			if err := guard.next(q.Cursor, page); err != nil {
				yield(Vote{}, err)
				return
			}
			q = VotesQuery{Cursor: page.Cursor}
		}
	}
}

// UserIDKind says which kind of user id a vote lookup takes (the service's
// source query parameter).
type UserIDKind string

// Kinds of user ids.
const (
	// UserIDTopgg looks a user up by Top.gg user id (the service's default).
	UserIDTopgg UserIDKind = "topgg"
	// UserIDDiscord looks a user up by Discord user id.
	UserIDDiscord UserIDKind = "discord"
)

// VoteStatus is a user's most recent vote, as [Client.VoteStatus] found it.
type VoteStatus struct {
	// Voted is false when the service knows no active vote of the user; the other
	// fields are then zero.
	Voted     bool      `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Weight    int       `json:"weight"`
}

// VoteStatus returns the user's latest vote (GET /v1/projects/@me/votes/:user_id).
// source "" means [UserIDTopgg]. No active vote is a normal answer: Voted false and a
// nil error. The service says so with a 404 in JSON (problem+json); any other 404,
// such as a web server's HTML page for a base URL that misses /api, is returned as
// an *APIError matching [ErrNotFound], so that a misconfiguration does not read as
// "nobody voted".
//
// It shares its rate-limit block with [Client.Votes]: a block one of them learns
// from a 429 refuses calls of both, locally, until it ends.
func (c *Client) VoteStatus(ctx context.Context, userID string, source UserIDKind) (VoteStatus, error) {
	if err := checkSnowflake("user_id", userID); err != nil {
		return VoteStatus{}, err
	}
	if err := source.validate(); err != nil {
		return VoteStatus{}, err
	}
	var q string
	if source != "" {
		q = "source=" + string(source) // validated: no escaping needed
	}
	var st VoteStatus
	status, err := c.do(ctx, &call{method: http.MethodGet, path: c.project.v1Path("/votes/" + userID), query: q, idempotent: true, family: votesFamily, route: RouteVoteStatus, absentOn404: true}, &st)
	if err != nil {
		return VoteStatus{}, err
	}
	if status == http.StatusNotFound {
		return VoteStatus{}, nil
	}
	st.Voted = true
	return st, nil
}
