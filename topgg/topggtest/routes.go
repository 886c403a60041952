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

// routes are the endpoints by path (":" a parameter); the v0 paths without a
// bot id act on the token's bot. token400: a bad token gets a 400.
var routes = []struct {
	path     string
	token400 bool
	methods  map[string]handler
}{
	{"/v1/projects/@me", true, map[string]handler{http.MethodGet: (*Server).getProject, http.MethodPatch: (*Server).patchProject}},
	{"/v1/projects/@me/announcements", true, map[string]handler{http.MethodPost: (*Server).postAnnouncement}},
	{"/v1/projects/@me/metrics", true, map[string]handler{http.MethodPatch: (*Server).patchMetrics}},
	{"/v1/projects/@me/metrics/batch", true, map[string]handler{http.MethodPost: (*Server).postMetricsBatch}},
	// POST: what both official v1 SDKs send (and Top.gg's older docs said).
	{"/v1/projects/@me/commands", false, map[string]handler{http.MethodPut: (*Server).putCommands, http.MethodPost: (*Server).putCommands}},
	{"/v1/projects/@me/votes", false, map[string]handler{http.MethodGet: (*Server).listVotes}},
	{"/v1/projects/@me/votes/:", false, map[string]handler{http.MethodGet: (*Server).voteStatus}},
	{"/bots", false, map[string]handler{http.MethodGet: (*Server).searchBots}},
	{"/bots/stats", false, map[string]handler{http.MethodGet: (*Server).getLegacyStats, http.MethodPost: (*Server).postLegacyStats}},
	{"/bots/votes", false, map[string]handler{http.MethodGet: (*Server).legacyVoters}},
	{"/bots/check", false, map[string]handler{http.MethodGet: (*Server).legacyCheck}},
	{"/bots/:", false, map[string]handler{http.MethodGet: (*Server).getBot}},
	{"/bots/:/votes", false, map[string]handler{http.MethodGet: (*Server).legacyVoters}},
	{"/bots/:/stats", false, map[string]handler{http.MethodGet: (*Server).getLegacyStats, http.MethodPost: (*Server).postLegacyStats}},
	{"/bots/:/check", false, map[string]handler{http.MethodGet: (*Server).legacyCheck}},
	{"/weekend", false, map[string]handler{http.MethodGet: (*Server).weekend}},
}

// match maps a path to its route and its parameter.
func match(path string) (methods map[string]handler, param string, token400, ok bool) {
	segs := strings.Split(path, "/")
	if slices.Contains(segs[1:], "") {
		return nil, "", false, false
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
				return rt.methods, param, rt.token400, true
			}
		}
	}
	return nil, "", false, false
}

// route answers the refusals the package doc lists, else runs the handler.
func (s *Server) route(w http.ResponseWriter, r *http.Request, path string, body []byte) {
	v1 := isV1Path(path)
	methods, param, token400, ok := match(path)
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
		status := http.StatusUnauthorized
		if token400 {
			status = http.StatusBadRequest
		}
		writeError(w, path, status, msg)
		return
	}
	if !v1 && param == "" && strings.HasPrefix(path, "/bots/") {
		param = s.cfg.project.PlatformID // the bot of the token
	}
	now := s.now()
	if strings.HasPrefix(path, "/bots") {
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
