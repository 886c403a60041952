package topggtest

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/dblkit/go-topgg/topgg"
)

// supportedLocales are the locale codes PATCH /v1/projects/@me accepts (spec 2.7).
var supportedLocales = []string{"en", "de", "fr", "pt", "tr", "hi", "ja", "ar", "nl", "ko", "it", "es", "ru", "uk", "vi", "zh"}

// Length limits in characters (runes), spec 4.1 and 8.
const (
	headlineMin    = 3
	headlineMax    = 140
	pageContentMin = 300
	pageContentMax = 50000
)

// ProjectUpdates returns the latest headline and page content set per locale.
// GET /v1/projects/@me keeps the first headline, as the service's cache would.
func (s *Server) ProjectUpdates() topgg.ProjectUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return topgg.ProjectUpdate{Headline: maps.Clone(s.headline), PageContent: maps.Clone(s.pageContent)}
}

func (s *Server) getProject(c *call) {
	writeJSON(c.w, http.StatusOK, s.cfg.project.wire())
}

func (s *Server) patchProject(c *call) {
	var body struct {
		Headline    map[string]string `json:"headline"`
		PageContent map[string]string `json:"page_content"`
	}
	if err := decodeStrict(c.body, &body); err != nil {
		writeProblem(c.w, http.StatusUnprocessableEntity, "invalid body: "+err.Error())
		return
	}
	if len(body.Headline)+len(body.PageContent) == 0 {
		writeProblem(c.w, http.StatusUnprocessableEntity, "at least one of headline or page_content is required")
		return
	}
	if err := cmp.Or(checkLocalized("headline", body.Headline, headlineMin, headlineMax),
		checkLocalized("page_content", body.PageContent, pageContentMin, pageContentMax)); err != nil {
		writeProblem(c.w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	s.mu.Lock()
	maps.Copy(s.headline, body.Headline)
	maps.Copy(s.pageContent, body.PageContent)
	s.mu.Unlock()
	writeNoContent(c.w)
}

// checkLocalized validates every locale and length, in locale order.
func checkLocalized(field string, m map[string]string, lo, hi int) error {
	for _, loc := range slices.Sorted(maps.Keys(m)) {
		text := m[loc]
		if !slices.Contains(supportedLocales, loc) {
			return fmt.Errorf("%s: unsupported locale %q", field, loc)
		}
		if err := checkLength(field+"."+loc, &text, lo, hi); err != nil {
			return err
		}
	}
	return nil
}
