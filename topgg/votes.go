package topgg

import (
	"cmp"
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// Vote is one vote: the voter's Top.gg and platform (Discord) ids (a vote
// status answer has none), its weight (2 on weekend-bonus votes), when made
// and when it expires.
type Vote struct {
	UserID     string    `json:"user_id,omitempty"`
	PlatformID string    `json:"platform_id,omitempty"`
	Weight     int       `json:"weight"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// VotePage is one page of the vote history, oldest vote first. Votes is empty
// once the history is read to its end; Cursor reads the next page.
type VotePage struct {
	Cursor string `json:"cursor"`
	Votes  []Vote `json:"data"`
}

// VotesQuery selects a page of votes: by Cursor (an opaque value from a
// previous page), or, without one, from StartDate (at most a year back).
type VotesQuery struct {
	Cursor    string
	StartDate time.Time
}

// wireTime formats a timestamp the client sends: UTC, at most 7 fractional
// digits (Top.gg's precision; a strict parser may refuse 9).
func wireTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.9999999Z") }

// votesFamily is the rate-limit family of both vote routes (the same data).
const votesFamily = "v1:votes"

// Votes returns one page of the vote history; it shares its rate-limit block
// with [Client.VoteStatus].
func (c *Client) Votes(ctx context.Context, q VotesQuery) (*VotePage, error) {
	if err := q.validate(time.Now()); err != nil {
		return nil, err
	}
	query := "cursor=" + url.QueryEscape(q.Cursor)
	if q.Cursor == "" {
		query = "startDate=" + url.QueryEscape(wireTime(q.StartDate))
	}
	return get[VotePage](ctx, c, &call{route: routeVotes, query: query, idempotent: true, family: votesFamily})
}

// AllVotes iterates over every vote since since, oldest first, page by page; a
// failure is yielded once, last. The walk always ends ([ErrPagination] for
// pages that would not) and stopping early sends no further request.
func (c *Client) AllVotes(ctx context.Context, since time.Time) iter.Seq2[Vote, error] {
	return func(yield func(Vote, error) bool) {
		guard := newPageGuard(http.MethodGet + " " + me + "/votes")
		q := VotesQuery{StartDate: since}
		for {
			page, err := c.Votes(ctx, q)
			if err != nil {
				yield(Vote{}, err)
				return
			}
			for _, v := range page.Votes {
				if !yield(v, nil) {
					return
				}
			}
			if len(page.Votes) == 0 || page.Cursor == "" {
				// The end is an empty page, but a page without a cursor ends it too.
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

// UserIDKind says which kind of user id a vote lookup takes.
type UserIDKind string

// Kinds of user ids: Top.gg's (the service's default) and Discord's.
const (
	UserIDTopgg   UserIDKind = "topgg"
	UserIDDiscord UserIDKind = "discord"
)

// VoteStatus returns the user's active vote, with the id given (userID, of
// source's kind; "" means [UserIDTopgg]), or nil when there is none; a 404
// not the service's own is [ErrNotFound].
func (c *Client) VoteStatus(ctx context.Context, userID string, source UserIDKind) (*Vote, error) {
	if err := cmp.Or(checkSnowflake("user_id", userID), source.validate()); err != nil {
		return nil, err
	}
	var q string
	if source != "" {
		q = "source=" + string(source) // validated: no escaping needed
	}
	var v Vote
	status, err := c.do(ctx, &call{route: routeVoteStatus, id: userID, query: q, idempotent: true, family: votesFamily, absentOn404: true}, &v)
	if err != nil || status == http.StatusNotFound {
		return nil, err
	}
	if source == UserIDDiscord {
		v.PlatformID = userID
	} else {
		v.UserID = userID
	}
	return &v, nil
}
