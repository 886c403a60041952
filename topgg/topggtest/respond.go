package topggtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// problem is the v1 error body (RFC 9457 problem+json); RetryAfter only on a 429.
type problem struct {
	Type       string `json:"type"`
	Title      string `json:"title"`
	Status     int    `json:"status"`
	Detail     string `json:"detail"`
	RetryAfter *int   `json:"retry-after,omitempty"`
}

func writeProblem(w http.ResponseWriter, status int, detail string) {
	writeProblemBody(w, problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail})
}

func writeProblemBody(w http.ResponseWriter, p problem) {
	b, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_, _ = w.Write(b)
}

func writeLegacyError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// writeError answers in the error shape of the version the path belongs to.
func writeError(w http.ResponseWriter, path string, status int, msg string) {
	if isV1Path(path) {
		writeProblem(w, status, msg)
		return
	}
	writeLegacyError(w, status, msg)
}

func isV1Path(path string) bool { return path == "/v1" || strings.HasPrefix(path, "/v1/") }

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "topggtest: encode: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeNoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// retryAfterSeconds rounds up, at least 1: a client waiting that long is never early.
func retryAfterSeconds(d time.Duration) int {
	secs := int((d + time.Second - 1) / time.Second)
	return max(secs, 1)
}

// decodeStrict decodes exactly one JSON value, refusing unknown members and
// trailing data, so a misspelt field in a client is caught.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty body")
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// isoLayouts are the ISO 8601 forms of a timestamp the official SDKs send:
// with Z or an offset, without one (read as UTC), or a date alone.
var isoLayouts = []string{time.RFC3339, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", time.DateOnly}

func parseISOTime(s string) (t time.Time, err error) {
	for _, l := range isoLayouts {
		if t, err = time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return t, err
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
