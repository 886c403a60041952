package discordtest

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redact"
)

// maxRequestBody bounds a REST request body (Discord's own limit for JSON
// bodies without files is far smaller).
const maxRequestBody = 1 << 20

// Call is one REST request the Server received.
type Call struct {
	Method string
	Path   string // URL path, e.g. "/api/v9/users/@me"
	Query  string // raw query, without "?"
	// Header is the request header; the Authorization value is replaced by
	// "[redacted]" so a Call can be printed.
	Header http.Header
	Body   []byte
	// Authorized reports whether Authorization was "Bot <token>".
	Authorized bool
	// Status is the HTTP status the Server answered.
	Status int
}

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

func notFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, codeGeneral, "404: Not Found")
}

func methodNotAllowed(w http.ResponseWriter) {
	writeError(w, http.StatusMethodNotAllowed, codeGeneral, "405: Method Not Allowed")
}

func invalidForm(w http.ResponseWriter, errs any) {
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
				methodNotAllowed(w)
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
	route(api+"/applications/@me", map[string]http.HandlerFunc{http.MethodGet: s.getApplication})
	for _, scope := range []string{"/applications/{app}/commands", "/applications/{app}/guilds/{guild}/commands"} {
		route(api+scope, map[string]http.HandlerFunc{
			http.MethodGet:  s.listCommands,
			http.MethodPut:  s.overwriteCommands,
			http.MethodPost: s.createCommand,
		})
		route(api+scope+"/{command}", map[string]http.HandlerFunc{
			http.MethodGet:    s.getCommand,
			http.MethodDelete: s.deleteCommand,
		})
	}
	route(api+"/guilds/{guild}/members/{user}/roles/{role}", map[string]http.HandlerFunc{
		http.MethodPut:    s.addRole,
		http.MethodDelete: s.removeRole,
	})
	route(api+"/users/@me/channels", map[string]http.HandlerFunc{http.MethodPost: s.openDM})
	route(api+"/channels/{channel}/messages", map[string]http.HandlerFunc{http.MethodPost: s.createMessage})
	route(api+"/interactions/{id}/{token}/callback", map[string]http.HandlerFunc{http.MethodPost: s.interactionCallback})
	route(api+"/webhooks/{app}/{token}", map[string]http.HandlerFunc{http.MethodPost: s.followup})
	route(api+"/webhooks/{app}/{token}/messages/@original", map[string]http.HandlerFunc{http.MethodPatch: s.editOriginal})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { notFound(w) })

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, readErr := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
		rec := &httpx.StatusRecorder{ResponseWriter: w}
		authorized := s.authorized(r.Header.Get("Authorization"))
		header := r.Header.Clone()
		if header.Get("Authorization") != "" {
			header.Set("Authorization", redact.Mark)
		}
		call := Call{
			Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			Header: header, Body: body, Authorized: authorized,
		}
		defer func() {
			call.Status = rec.Status
			s.mu.Lock()
			s.calls = append(s.calls, call)
			s.mu.Unlock()
			// The path may hold an interaction token: log the route only.
			s.log.Debug("rest", "method", r.Method, "route", r.Pattern, "status", rec.Status)
		}()

		if f, ok := s.faults.Take(r.Method, faultPath(r.URL.Path)); ok && s.playFault(rec, r, f) {
			return
		}
		switch {
		case readErr != nil:
			writeError(rec, http.StatusBadRequest, codeGeneral, "400: Bad Request")
			return
		case len(body) > maxRequestBody:
			writeError(rec, http.StatusRequestEntityTooLarge, codeGeneral, "413: Request Entity Too Large")
			return
		case !supportedVersion(r.URL.Path):
			notFound(rec)
			return
		}
		// GET /gateway is public on Discord; everything else needs the bot
		// token (discordgo always sends it).
		public := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/gateway")
		if !authorized && !public {
			writeError(rec, http.StatusUnauthorized, codeGeneral, "401: Unauthorized")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		mux.ServeHTTP(rec, r)
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
		invalidForm(w, map[string]any{"_errors": []map[string]string{{"code": "BASE_TYPE_BAD_JSON", "message": msg}}})
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
		"id":                     s.cfg.appID,
		"name":                   s.cfg.botName,
		"icon":                   nil,
		"description":            "",
		"bot_public":             true,
		"bot_require_code_grant": false,
		"verify_key":             strings.Repeat("0", 64),
		"flags":                  s.cfg.appFlags,
		"bot":                    s.botUser(),
		"owner": map[string]any{
			"id": ownerID(s.cfg.botID), "username": "owner", "discriminator": "0", "avatar": nil,
		},
	})
}
