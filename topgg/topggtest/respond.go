package topggtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
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
	p := problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail}
	writeBody(w, status, "application/problem+json", p)
}

// writeTooMany writes a 429's body, its "retry-after" in seconds as the
// Retry-After header the caller set: a problem on v1, that member alone on v0.
func writeTooMany(w http.ResponseWriter, path string, secs int, detail string) {
	if !isV1Path(path) {
		writeJSON(w, http.StatusTooManyRequests, map[string]int{"retry-after": secs})
		return
	}
	status := http.StatusTooManyRequests
	writeBody(w, status, "application/problem+json",
		problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, RetryAfter: &secs})
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

func writeJSON(w http.ResponseWriter, status int, v any) { writeBody(w, status, "application/json", v) }

func writeBody(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "topggtest: encode: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeNoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// retryAfterSeconds rounds up, at least 1: a client waiting that long is never early.
func retryAfterSeconds(d time.Duration) int { return max(int((d+time.Second-1)/time.Second), 1) }

// checkLength checks a required text's length in characters (runes).
func checkLength(field string, v *string, lo, hi int) error {
	if v == nil {
		return fmt.Errorf("%s is required", field)
	}
	if n := utf8.RuneCountInString(*v); n < lo || n > hi {
		return fmt.Errorf("%s: must be %d to %d characters, got %d", field, lo, hi, n)
	}
	return nil
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
