package topggtest

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// call is one routed request, authenticated and ready for its handler.
type call struct {
	w     http.ResponseWriter
	r     *http.Request
	body  []byte
	param string // user_id (v1 vote lookup) or bot id (v0)
	now   time.Time
}

type handler func(*Server, *call)

// match maps a path (without the mount prefix) to its handlers by method.
func match(path string) (methods map[string]handler, param string, ok bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if slices.Contains(segs, "") {
		return nil, "", false
	}
	switch {
	case len(segs) >= 3 && segs[0] == "v1" && segs[1] == "projects" && segs[2] == "@me":
		return matchV1(segs[3:])
	case segs[0] == "bots":
		return matchLegacy(segs[1:])
	}
	return nil, "", false
}

func matchV1(rest []string) (map[string]handler, string, bool) {
	switch len(rest) {
	case 0:
		return map[string]handler{http.MethodGet: (*Server).getProject, http.MethodPatch: (*Server).patchProject}, "", true
	case 1:
		switch rest[0] {
		case "announcements":
			return map[string]handler{http.MethodPost: (*Server).postAnnouncement}, "", true
		case "metrics":
			return map[string]handler{http.MethodPatch: (*Server).patchMetrics}, "", true
		case "commands":
			return map[string]handler{http.MethodPut: (*Server).putCommands}, "", true
		case "votes":
			return map[string]handler{http.MethodGet: (*Server).listVotes}, "", true
		}
	case 2:
		switch rest[0] {
		case "metrics":
			if rest[1] == "batch" {
				return map[string]handler{http.MethodPost: (*Server).postMetricsBatch}, "", true
			}
		case "votes":
			return map[string]handler{http.MethodGet: (*Server).voteStatus}, rest[1], true
		}
	}
	return nil, "", false
}

func matchLegacy(rest []string) (map[string]handler, string, bool) {
	switch len(rest) {
	case 0:
		return map[string]handler{http.MethodGet: (*Server).searchBots}, "", true
	case 1:
		return map[string]handler{http.MethodGet: (*Server).getBot}, rest[0], true
	case 2:
		switch rest[1] {
		case "votes":
			return map[string]handler{http.MethodGet: (*Server).legacyVoters}, rest[0], true
		case "stats":
			return map[string]handler{http.MethodGet: (*Server).getLegacyStats, http.MethodPost: (*Server).postLegacyStats}, rest[0], true
		case "check":
			return map[string]handler{http.MethodGet: (*Server).legacyCheck}, rest[0], true
		}
	}
	return nil, "", false
}

// route answers 404 for unknown paths, 405 for wrong methods, 401 for bad
// auth, 415 for a body that is not JSON, 429 over the v0 limit, and
// otherwise runs the handler.
func (s *Server) route(w http.ResponseWriter, r *http.Request, path string, body []byte) {
	v1 := isV1Path(path)
	methods, param, ok := match(path)
	if !ok {
		if v1 {
			writeProblem(w, http.StatusNotFound, "no such endpoint")
		} else {
			writeLegacyError(w, http.StatusNotFound, "Not found")
		}
		return
	}
	h, ok := methods[r.Method]
	if !ok {
		allowed := slices.Sorted(maps.Keys(methods))
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, path, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed here")
		return
	}
	if v1 {
		if ok, detail := s.checkV1Auth(r); !ok {
			writeProblem(w, http.StatusUnauthorized, detail)
			return
		}
	} else {
		if ok, msg := s.checkLegacyAuth(r); !ok {
			writeLegacyError(w, http.StatusUnauthorized, msg)
			return
		}
	}
	now := s.now()
	if !v1 {
		if wait, limited := s.legacyLimited(now); limited {
			writeRateLimited(w, wait)
			return
		}
	}
	if len(body) > 0 && !hasJSONContentType(r) {
		writeError(w, path, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	h(s, &call{w: w, r: r, body: body, param: param, now: now})
}
