package discordtest

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// maxRequestBody bounds a REST request body (Discord's own limit for JSON
// bodies without files is far smaller).
const maxRequestBody = 1 << 20

// Request is one REST request the Server received: Path is the whole URL
// path ("/api/v9/users/@me"), the Authorization value is "[redacted]" so that
// a Request can be printed, At is real time. The same type as topggtest.Request.
type Request = httpx.Request

// Requests returns a copy of every REST request received, in arrival order.
func (s *Server) Requests() []Request { return s.requests.All() }

// apiError is Discord's JSON error body.
type apiError struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
	Errors  any    `json:"errors,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status, code int, message string) {
	writeJSON(w, status, apiError{Message: message, Code: code})
}

// writeStatus answers Discord's plain error, e.g. {"message": "404: Not
// Found", "code": 0}.
func writeStatus(w http.ResponseWriter, status int) {
	writeError(w, status, 0, fmt.Sprintf("%d: %s", status, http.StatusText(status)))
}

// invalidForm answers Discord's 400 Invalid Form Body with one error, on
// field or (field empty) on the whole body.
func invalidForm(w http.ResponseWriter, field, code, message string) {
	var errs any = map[string]any{"_errors": []map[string]string{{"code": code, "message": message}}}
	if field != "" {
		errs = map[string]any{field: errs}
	}
	writeJSON(w, http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: 50035, Errors: errs})
}

// restHandler serves the REST API (v9 and v10): it records every request,
// checks the route and the bot token, then serves.
func (s *Server) restHandler() http.Handler {
	reply := func(v any) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, v) }
	}
	mux := http.NewServeMux()
	for pattern, h := range map[string]http.HandlerFunc{
		"GET /gateway": reply(map[string]string{"url": s.gatewayURL()}),
		"GET /gateway/bot": reply(map[string]any{"url": s.gatewayURL(), "shards": s.cfg.shardCount,
			"session_start_limit": map[string]int{"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}}),
		"GET /users/@me": reply(s.botUser()),
		"GET /oauth2/applications/@me": reply(map[string]any{
			"id": s.cfg.appID, "name": s.cfg.botName, "bot_public": true, "bot": s.botUser(),
			"owner": map[string]any{"id": ownerID(s.cfg.botID), "username": "owner", "discriminator": "0"}}),
		"GET /applications/{app}/commands":                   s.serveCommands,
		"PUT /applications/{app}/commands":                   s.serveCommands,
		"POST /applications/{app}/commands":                  s.serveCommands,
		"GET /applications/{app}/guilds/{guild}/commands":    s.serveCommands,
		"PUT /applications/{app}/guilds/{guild}/commands":    s.serveCommands,
		"POST /applications/{app}/guilds/{guild}/commands":   s.serveCommands,
		"PUT /guilds/{guild}/members/{user}/roles/{role}":    s.changeRole,
		"DELETE /guilds/{guild}/members/{user}/roles/{role}": s.changeRole,
		"POST /users/@me/channels":                           s.openDM,
		"POST /channels/{channel}/messages":                  s.createMessage,
		"POST /interactions/{id}/{token}/callback":           s.interactionCallback,
	} {
		method, path, _ := strings.Cut(pattern, " ")
		for _, version := range []string{"/api/v9", "/api/v10"} {
			mux.HandleFunc(method+" "+version+path, h)
		}
	}

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, readErr := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
		rec := &httpx.StatusRecorder{ResponseWriter: w}
		authorized := s.authorized(r.Header.Get("Authorization"))
		header := r.Header.Clone()
		if header.Get("Authorization") != "" {
			header.Set("Authorization", httpx.Redacted)
		}
		answered := s.requests.Add(Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: header,
			Body: body, At: time.Now()})
		defer func() { answered(rec.Status) }()

		if f, ok := s.faults.Take(r.Method, faultPath(r.URL.Path)); ok && s.playFault(rec, r, f) {
			return
		}
		h, pattern := mux.Handler(r)
		switch {
		case readErr != nil:
			writeStatus(rec, http.StatusBadRequest)
		case len(body) > maxRequestBody:
			writeStatus(rec, http.StatusRequestEntityTooLarge)
		case pattern == "":
			status := httptest.NewRecorder()
			h.ServeHTTP(status, r) // net/http's 404 or 405, answered as Discord does
			writeStatus(rec, status.Code)
		case !authorized && !strings.HasSuffix(pattern, "/gateway"): // public, as on Discord
			writeStatus(rec, http.StatusUnauthorized)
		default:
			r.Body = io.NopCloser(bytes.NewReader(body))
			mux.ServeHTTP(rec, r)
		}
	})
}

// authorized reports whether an Authorization header carries the bot token,
// in constant time.
func (s *Server) authorized(header string) bool {
	token, ok := strings.CutPrefix(header, "Bot ")
	return ok && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.token)) == 1
}

// decodeJSON decodes a request body; an empty or malformed body is an
// invalid form, answered here.
func decodeJSON(w http.ResponseWriter, body io.Reader, v any) bool {
	if err := json.NewDecoder(body).Decode(v); err != nil {
		msg := "malformed JSON body"
		if errors.Is(err, io.EOF) {
			msg = "empty body"
		}
		invalidForm(w, "", "BASE_TYPE_BAD_JSON", msg)
		return false
	}
	return true
}
