package topgg

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// NewAnnouncement is an announcement to post: a title of 3 to 100
// characters, content of 10 to 2,000, and a Category: "announcement" (when
// empty), "event" or "new_feature".
type NewAnnouncement struct {
	Title    string `json:"title"`
	Content  string `json:"content"`
	Category string `json:"category,omitempty"`
}

// Announcement is a posted announcement, as the service returned it.
type Announcement struct {
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	Category  string    `json:"category,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// PostAnnouncement posts an announcement, never twice; after a 2xx the client
// refuses the next for the service's 4 hours (a local *RateLimitError).
func (c *Client) PostAnnouncement(ctx context.Context, a NewAnnouncement) (*Announcement, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	r := &call{route: routeAnnouncements, body: a, family: "v1:announcements", allowEmpty: true, tokenOnly400: true}
	var out Announcement
	status, err := c.do(ctx, r, &out)
	if status >= 200 && status < 300 {
		c.limits.block(r.family, 4*time.Hour) // the service's one announcement per 4 hours
		if err != nil {
			return nil, postedButUnreadable(r.op(), status, err)
		}
	}
	if err != nil {
		return nil, err
	}
	if out.Title == "" && out.Content == "" {
		out = Announcement{Title: a.Title, Content: a.Content, Category: a.Category}
	}
	return &out, nil
}

// postedButUnreadable turns the failure to read a 2xx answer into a
// *DecodeError that says the announcement was posted.
func postedButUnreadable(op string, status int, err error) error {
	de := &DecodeError{Op: op, Status: status}
	if old, ok := errors.AsType[*DecodeError](err); ok {
		de.Body, err = old.Body, old.Err
	} else if re, ok := errors.AsType[*RequestError](err); ok {
		err = re.Err // its Op would repeat in the message
	}
	de.Err = fmt.Errorf("announcement was posted, but the reply was unreadable: %w", err)
	return de
}
