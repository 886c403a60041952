package topgg

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// projectIDFromToken reads the project id from the token's informal payload (the
// middle of three '.'-separated parts, base64 JSON {"id": ...}). The payload is not
// documented, so any failure yields "" and never an error.
func projectIDFromToken(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	seg := strings.TrimRight(parts[1], "=")
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding} {
		if raw, err = enc.DecodeString(seg); err == nil {
			break
		}
	}
	if err != nil {
		return ""
	}
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &p) != nil || len(p.ID) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(p.ID, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(p.ID, &n) == nil {
		return n.String()
	}
	return ""
}
