package topggtest

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
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

// routes are the endpoints by path (without the mount prefix); ":" is a
// path parameter, the user_id of a v1 vote lookup or a v0 bot id.
var routes = []struct {
	path    string
	methods map[string]handler
}{
	{"/v1/projects/@me", map[string]handler{http.MethodGet: (*Server).getProject, http.MethodPatch: (*Server).patchProject}},
	{"/v1/projects/@me/announcements", map[string]handler{http.MethodPost: (*Server).postAnnouncement}},
	{"/v1/projects/@me/metrics", map[string]handler{http.MethodPatch: (*Server).patchMetrics}},
	{"/v1/projects/@me/metrics/batch", map[string]handler{http.MethodPost: (*Server).postMetricsBatch}},
	{"/v1/projects/@me/commands", map[string]handler{http.MethodPut: (*Server).putCommands}},
	{"/v1/projects/@me/votes", map[string]handler{http.MethodGet: (*Server).listVotes}},
	{"/v1/projects/@me/votes/:", map[string]handler{http.MethodGet: (*Server).voteStatus}},
	{"/bots", map[string]handler{http.MethodGet: (*Server).searchBots}},
	{"/bots/:", map[string]handler{http.MethodGet: (*Server).getBot}},
	{"/bots/:/votes", map[string]handler{http.MethodGet: (*Server).legacyVoters}},
	{"/bots/:/stats", map[string]handler{http.MethodGet: (*Server).getLegacyStats, http.MethodPost: (*Server).postLegacyStats}},
	{"/bots/:/check", map[string]handler{http.MethodGet: (*Server).legacyCheck}},
}

// match maps a path to its handlers by method and its parameter.
func match(path string) (methods map[string]handler, param string, ok bool) {
	segs := strings.Split(path, "/")
	if slices.Contains(segs[1:], "") {
		return nil, "", false
	}
	for _, rt := range routes {
		want := strings.Split(rt.path, "/")
		if len(want) != len(segs) {
			continue
		}
		param = ""
		for i, w := range want {
			if w == ":" {
				param = segs[i]
			} else if w != segs[i] {
				break
			}
			if i == len(want)-1 {
				return rt.methods, param, true
			}
		}
	}
	return nil, "", false
}

// route answers the refusals the package doc lists, else runs the handler.
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
	auth := s.checkLegacyAuth
	if v1 {
		auth = s.checkV1Auth
	}
	if ok, msg := auth(r); !ok {
		writeError(w, path, http.StatusUnauthorized, msg)
		return
	}
	now := s.now()
	if !v1 {
		if wait, limited := s.legacyLimited(now); limited {
			secs := retryAfterSeconds(wait)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeJSON(w, http.StatusTooManyRequests, map[string]int{"retry-after": secs})
			return
		}
	}
	mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	if len(body) > 0 && !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		writeError(w, path, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	h(s, &call{w: w, r: r, body: body, param: param, now: now})
}
