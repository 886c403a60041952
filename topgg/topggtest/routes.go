package topggtest

import (
	"io"
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

// endpoint is one path of the API and its handlers by method; the v0 paths
// without a bot id act on the token's bot. token400: a bad token gets a 400.
type endpoint struct {
	path     string
	token400 bool
	methods  map[string]handler
}

var endpoints = []endpoint{
	{"/v1/projects/@me", true, map[string]handler{http.MethodGet: (*Server).getProject, http.MethodPatch: (*Server).patchProject}},
	{"/v1/projects/@me/announcements", true, map[string]handler{http.MethodPost: (*Server).postAnnouncement}},
	{"/v1/projects/@me/metrics", true, map[string]handler{http.MethodPatch: (*Server).patchMetrics}},
	{"/v1/projects/@me/metrics/batch", true, map[string]handler{http.MethodPost: (*Server).postMetricsBatch}},
	// POST: what both official v1 SDKs send (and Top.gg's older docs said).
	{"/v1/projects/@me/commands", false, map[string]handler{http.MethodPut: (*Server).putCommands, http.MethodPost: (*Server).putCommands}},
	{"/v1/projects/@me/votes", false, map[string]handler{http.MethodGet: (*Server).listVotes}},
	{"/v1/projects/@me/votes/{id}", false, map[string]handler{http.MethodGet: (*Server).voteStatus}},
	{"/bots", false, map[string]handler{http.MethodGet: (*Server).searchBots}},
	{"/bots/stats", false, map[string]handler{http.MethodGet: (*Server).getLegacyStats, http.MethodPost: (*Server).postLegacyStats}},
	{"/bots/votes", false, map[string]handler{http.MethodGet: (*Server).legacyVoters}},
	{"/bots/check", false, map[string]handler{http.MethodGet: (*Server).legacyCheck}},
	{"/bots/{id}", false, map[string]handler{http.MethodGet: (*Server).getBot}},
	{"/bots/{id}/votes", false, map[string]handler{http.MethodGet: (*Server).legacyVoters}},
	{"/bots/{id}/stats", false, map[string]handler{http.MethodGet: (*Server).getLegacyStats, http.MethodPost: (*Server).postLegacyStats}},
	{"/bots/{id}/check", false, map[string]handler{http.MethodGet: (*Server).legacyCheck}},
	{"/weekend", false, map[string]handler{http.MethodGet: (*Server).weekend}},
}

// routes serves the endpoints, and 404 in the version's error shape.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for _, e := range endpoints {
		mux.HandleFunc(e.path, func(w http.ResponseWriter, r *http.Request) { s.route(w, r, e) })
	}
	mux.HandleFunc("/", notFound)
	return mux
}

func notFound(w http.ResponseWriter, r *http.Request) {
	if isV1Path(r.URL.Path) {
		writeProblem(w, http.StatusNotFound, "no such endpoint")
	} else {
		writeLegacyError(w, http.StatusNotFound, "Not found")
	}
}

// route answers the refusals the package doc lists, else runs the handler.
func (s *Server) route(w http.ResponseWriter, r *http.Request, e endpoint) {
	path := r.URL.Path
	v1 := isV1Path(path)
	h, ok := e.methods[r.Method]
	if !ok {
		w.Header().Set("Allow", strings.Join(slices.Sorted(maps.Keys(e.methods)), ", "))
		writeError(w, path, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed here")
		return
	}
	if msg := s.authorize(r, v1); msg != "" {
		status := http.StatusUnauthorized
		if e.token400 {
			status = http.StatusBadRequest
		}
		if !v1 {
			msg = "Unauthorized: " + msg
		}
		writeError(w, path, status, msg)
		return
	}
	param := r.PathValue("id")
	if !v1 && param == "" && strings.HasPrefix(path, "/bots/") {
		param = s.cfg.project.PlatformID // the bot of the token
	}
	now := s.now()
	if strings.HasPrefix(path, "/bots") && s.legacyLimited(w, now) {
		return
	}
	body, _ := io.ReadAll(r.Body) // in memory: serve read it
	mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	if len(body) > 0 && !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		writeError(w, path, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	h(s, &call{w: w, r: r, body: body, param: param, now: now})
}
