package topggtest

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/topgg"
)

const (
	announcementCooldown = 4 * time.Hour
	titleMin, titleMax   = 3, 100
	contentMin           = 10
	contentMax           = 2000
)

var announcementCategories = []string{"announcement", "event", "new_feature"}

// Announcements returns the accepted POST /v1/projects/@me/announcements,
// oldest first (Category "announcement" when the request had none).
func (s *Server) Announcements() []topgg.Announcement {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.announcements)
}

func (s *Server) postAnnouncement(c *call) {
	var body struct {
		Title    *string `json:"title"`
		Content  *string `json:"content"`
		Category *string `json:"category"`
	}
	if err := decodeStrict(c.body, &body); err != nil {
		writeProblem(c.w, http.StatusUnprocessableEntity, "invalid body: "+err.Error())
		return
	}
	if err := checkAnnouncement(body.Title, body.Content, body.Category); err != nil {
		writeProblem(c.w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	a := topgg.Announcement{Title: *body.Title, Content: *body.Content, Category: "announcement", CreatedAt: c.now}
	if body.Category != nil {
		a.Category = *body.Category
	}

	s.mu.Lock()
	if n := len(s.announcements); n > 0 {
		if next := s.announcements[n-1].CreatedAt.Add(announcementCooldown); c.now.Before(next) {
			s.mu.Unlock()
			secs := retryAfterSeconds(next.Sub(c.now))
			c.w.Header().Set("Retry-After", fmt.Sprint(secs))
			writeTooMany(c.w, c.r.URL.Path, secs, fmt.Sprintf("one announcement per 4 hours; retry in %d seconds", secs))
			return
		}
	}
	s.announcements = append(s.announcements, a)
	s.mu.Unlock()

	a.CreatedAt = a.CreatedAt.UTC()
	writeJSON(c.w, http.StatusOK, a)
}

func checkAnnouncement(title, content, category *string) error {
	if err := cmp.Or(checkLength("title", title, titleMin, titleMax),
		checkLength("content", content, contentMin, contentMax)); err != nil {
		return err
	}
	if category != nil && !slices.Contains(announcementCategories, *category) {
		return fmt.Errorf("category: must be one of announcement, event, new_feature, got %q", *category)
	}
	return nil
}
