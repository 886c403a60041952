package topggprom

import "strings"

// Label values outside a label's set: "unknown" for an API request's route
// and outcome (the client's own word), "other" elsewhere.
const (
	other   = "other"
	unknown = "unknown"
)

// enum is one of the jobs' small typed sets: values count from 1, and String
// names each.
type enum interface {
	~uint8
	String() string
}

// labels returns the label values of T, indexed by value: [0] is zero (for
// any value outside the set), then the String of T(1), T(2), ... up to the
// first that names no value.
func labels[T enum](zero string) []string {
	out := []string{zero}
	for i := 1; i < 256; i++ {
		s := T(i).String()
		if !isLabel(s) {
			break
		}
		out = append(out, s)
	}
	return out
}

// isLabel reports whether s names a value ("unknown" and "Origin(4)" do not).
func isLabel(s string) bool {
	return s != "" && s != unknown && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == ""
}

// at returns v's index in a table of n label values, or 0 outside it.
func at[T ~uint8](v T, n int) int {
	if int(v) < n {
		return int(v)
	}
	return 0
}

// method bounds an HTTP method.
func method(m string) string {
	switch m {
	case "GET", "POST", "PUT", "PATCH", "DELETE":
		return m
	}
	return other
}

// documented are the status codes with a label value of their own, those
// Top.gg documents or the client treats apart, three digits a space apart.
const documented = "200 201 204 400 401 403 404 408 413 429 500 502 503 504"

// code returns the label value of a status code: one of documented, "none"
// for no answer, and "other" for any other code.
func code(status int) string {
	if status == 0 {
		return "none"
	}
	for i := 0; i+3 <= len(documented); i += 4 {
		s := documented[i : i+3]
		if int(s[0]-'0')*100+int(s[1]-'0')*10+int(s[2]-'0') == status {
			return s
		}
	}
	return other
}
