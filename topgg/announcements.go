package topgg

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// AnnouncementCategory classifies an announcement. Empty means the service's default,
// [CategoryAnnouncement].
type AnnouncementCategory string

// Announcement categories the service documents.
const (
	CategoryAnnouncement AnnouncementCategory = "announcement"
	CategoryEvent        AnnouncementCategory = "event"
	CategoryNewFeature   AnnouncementCategory = "new_feature"
)

// NewAnnouncement is an announcement to post.
type NewAnnouncement struct {
	// Title has 3 to 100 characters.
	Title string `json:"title"`
	// Content has 10 to 2,000 characters.
	Content string `json:"content"`
	// Category is optional.
	Category AnnouncementCategory `json:"category,omitempty"`
}

// Announcement is a posted announcement, as the service returned it.
type Announcement struct {
	Title     string               `json:"title"`
	Content   string               `json:"content"`
	Category  AnnouncementCategory `json:"category,omitempty"`
	CreatedAt time.Time            `json:"created_at"`
}

// PostAnnouncement posts an announcement (POST /v1/projects/@me/announcements).
//
// It is never sent twice: a failure is returned as it is, without retry, since a
// retry could post the announcement twice. After a success the client refuses further
// announcements for [AnnouncementCooldown] with a local *RateLimitError.
func (c *Client) PostAnnouncement(ctx context.Context, a NewAnnouncement) (*Announcement, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	const family = "v1:announcements"
	var out Announcement
	// allowEmpty: the post succeeded even if the service sends nothing back, and
	// calling it a failure would invite a second post.
	if _, err := c.do(ctx, &call{method: http.MethodPost, path: "/v1/projects/@me/announcements", body: a, family: family, allowEmpty: true}, &out); err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			// A 2xx that did not decode still posted the announcement.
			c.limits.block(family, AnnouncementCooldown)
		}
		return nil, err
	}
	c.limits.block(family, AnnouncementCooldown)
	if out.Title == "" && out.Content == "" {
		out = Announcement{Title: a.Title, Content: a.Content, Category: a.Category}
	}
	return &out, nil
}
