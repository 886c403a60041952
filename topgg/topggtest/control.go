package topggtest

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"time"
)

// controlPrefix is where [WithControlAPI] serves, beside the API root.
const controlPrefix = "/control"

// queryVote is a vote of the control API: a Vote and the query its webhooks carry.
type queryVote struct {
	Vote
	Query string `json:"query"`
}

// controlMux is the control API: JSON in and out, errors as {"error": ...},
// no token (the fake listens on loopback unless told otherwise).
func (s *Server) controlMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /control", func(w http.ResponseWriter, _ *http.Request) {
		p := s.Project()
		p.Project = p.wire()
		writeJSON(w, http.StatusOK, map[string]any{"url": s.URL, "token": s.token, "project": p})
	})
	mux.HandleFunc("POST /control/votes", controlCall(func(body []byte) error {
		if bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) { // one vote
			body = slices.Concat([]byte("["), body, []byte("]"))
		}
		var votes []queryVote
		if err := decodeStrict(body, &votes); err != nil {
			return err
		}
		for _, v := range votes {
			s.AddVoteQuery(v.Query, v.Vote)
		}
		return nil
	}))
	mux.HandleFunc("POST /control/webhooks", controlCall(func(body []byte) error {
		var t struct{ URL, Secret, Authorization string }
		if err := decodeStrict(body, &t); err != nil {
			return err
		}
		if t.Secret != "" {
			return s.AddWebhook(t.URL, t.Secret)
		}
		return s.AddLegacyWebhook(t.URL, t.Authorization)
	}))
	mux.HandleFunc("POST /control/bots", controlCall(func(body []byte) error {
		var b Bot
		if err := decodeStrict(body, &b); err != nil {
			return err
		}
		return s.AddBot(b)
	}))
	mux.HandleFunc("POST /control/cursors/expire", controlCall(func([]byte) error { s.ExpireCursors(); return nil }))
	mux.HandleFunc("POST /control/webhooks/test", controlCall(func([]byte) error { s.SendWebhookTest(); return nil }))
	mux.HandleFunc("POST /control/faults", controlCall(func(body []byte) error {
		var f struct {
			Method, Path, Body string
			Times, Status      int
			Drop, Endless      bool
			Delay              float64 // seconds
			RetryAfter         float64 `json:"retry_after"` // seconds
			ContentType        string  `json:"content_type"`
			Header             map[string]string
		}
		if err := decodeStrict(body, &f); err != nil {
			return err
		}
		return s.Inject(Fault{Method: f.Method, Path: f.Path, Times: f.Times, Status: f.Status,
			RetryAfter: seconds(f.RetryAfter), Drop: f.Drop, Delay: seconds(f.Delay), Body: f.Body,
			ContentType: f.ContentType, Header: f.Header, Endless: f.Endless})
	}))
	mux.HandleFunc("GET /control/requests", func(w http.ResponseWriter, _ *http.Request) {
		out := []map[string]any{}
		for _, r := range s.Requests() {
			out = append(out, map[string]any{"method": r.Method, "path": r.Path, "query": r.Query,
				"header": r.Header, "body": string(r.Body), "at": r.At, "status": r.Status})
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET /control/deliveries", func(w http.ResponseWriter, _ *http.Request) {
		out := []map[string]any{}
		for _, d := range s.Deliveries() {
			attempts := []map[string]any{}
			for _, a := range d.Attempts {
				attempts = append(attempts, map[string]any{"at": a.At, "status": a.Status})
				if a.Err != nil {
					attempts[len(attempts)-1]["error"] = a.Err.Error()
				}
			}
			out = append(out, map[string]any{"url": d.URL, "version": d.Version, "type": d.Type,
				"body": string(d.Body), "attempts": attempts, "done": d.Done, "delivered": d.Delivered()})
		}
		writeJSON(w, http.StatusOK, out)
	})
	return mux
}

// controlCall answers 204 when do accepts the body, else 400 with its error.
func controlCall(do func(body []byte) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err == nil {
			err = do(body)
		}
		if err != nil {
			writeLegacyError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeNoContent(w)
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
