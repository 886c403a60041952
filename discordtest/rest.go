package discordtest

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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

// Discord JSON error codes the fake uses.
const (
	codeGeneral             = 0
	codeUnknownGuild        = 10004
	codeUnknownWebhook      = 10015
	codeUnknownCommand      = 10063
	codeUnknownInteraction  = 10062
	codeMissingAccess       = 50001
	codeInvalidFormBody     = 50035
	codeEmptyMessage        = 50006
	codeMaxCommands         = 30032
	codeAlreadyAcknowledged = 40060
)

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
	writeError(w, status, codeGeneral, fmt.Sprintf("%d: %s", status, http.StatusText(status)))
}

// invalidForm answers Discord's 400 Invalid Form Body with one error, on
// field or (field empty) on the whole body.
func invalidForm(w http.ResponseWriter, field, code, message string) {
	var errs any = map[string]any{"_errors": []map[string]string{{"code": code, "message": message}}}
	if field != "" {
		errs = map[string]any{field: errs}
	}
	writeJSON(w, http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: codeInvalidFormBody, Errors: errs})
}

// restHandler serves the REST API: it records every request, checks the
// API version and the bot token, then routes.
func (s *Server) restHandler() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern string, methods map[string]http.HandlerFunc) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			h, ok := methods[r.Method]
			if !ok {
				writeStatus(w, http.StatusMethodNotAllowed)
				return
			}
			h(w, r)
		})
	}
	const api = "/api/{version}"
	route(api+"/gateway", map[string]http.HandlerFunc{http.MethodGet: s.getGateway})
	route(api+"/gateway/bot", map[string]http.HandlerFunc{http.MethodGet: s.getGatewayBot})
	route(api+"/users/@me", map[string]http.HandlerFunc{http.MethodGet: s.getMe})
	route(api+"/oauth2/applications/@me", map[string]http.HandlerFunc{http.MethodGet: s.getApplication})
	for _, scope := range []string{"/applications/{app}/commands", "/applications/{app}/guilds/{guild}/commands"} {
		route(api+scope, map[string]http.HandlerFunc{
			http.MethodGet:  s.listCommands,
			http.MethodPut:  s.overwriteCommands,
			http.MethodPost: s.createCommand,
		})
	}
	route(api+"/guilds/{guild}/members/{user}/roles/{role}", map[string]http.HandlerFunc{
		http.MethodPut:    s.addRole,
		http.MethodDelete: s.removeRole,
	})
	route(api+"/users/@me/channels", map[string]http.HandlerFunc{http.MethodPost: s.openDM})
	route(api+"/channels/{channel}/messages", map[string]http.HandlerFunc{http.MethodPost: s.createMessage})
	route(api+"/interactions/{id}/{token}/callback", map[string]http.HandlerFunc{http.MethodPost: s.interactionCallback})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { writeStatus(w, http.StatusNotFound) })

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
		// GET /gateway is public on Discord; everything else needs the token.
		public := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/gateway")
		switch {
		case readErr != nil:
			writeStatus(rec, http.StatusBadRequest)
		case len(body) > maxRequestBody:
			writeStatus(rec, http.StatusRequestEntityTooLarge)
		case !supportedVersion(r.URL.Path):
			writeStatus(rec, http.StatusNotFound)
		case !authorized && !public:
			writeStatus(rec, http.StatusUnauthorized)
		default:
			r.Body = io.NopCloser(bytes.NewReader(body))
			mux.ServeHTTP(rec, r)
		}
	})
}

// supportedVersion reports whether path is under /api/v9/ or /api/v10/.
func supportedVersion(path string) bool {
	return strings.HasPrefix(path, "/api/v9/") || strings.HasPrefix(path, "/api/v10/")
}

// authorized reports whether an Authorization header carries the bot token,
// in constant time.
func (s *Server) authorized(header string) bool {
	token, ok := strings.CutPrefix(header, "Bot ")
	return ok && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.token)) == 1
}

// decodeJSON decodes a request body; an empty or malformed body is an
// invalid form, answered here.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		msg := "malformed JSON body"
		if errors.Is(err, io.EOF) {
			msg = "empty body"
		}
		invalidForm(w, "", "BASE_TYPE_BAD_JSON", msg)
		return false
	}
	return true
}

func (s *Server) getGateway(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"url": s.gatewayURL()})
}

func (s *Server) getGatewayBot(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"url":    s.gatewayURL(),
		"shards": s.cfg.shardCount,
		"session_start_limit": map[string]int{
			"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1,
		},
	})
}

func (s *Server) getMe(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.botUser())
}

func (s *Server) getApplication(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"id": s.cfg.appID, "name": s.cfg.botName, "bot_public": true, "bot": s.botUser(),
		"owner": map[string]any{"id": ownerID(s.cfg.botID), "username": "owner", "discriminator": "0"},
	})
}
