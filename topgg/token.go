package topgg

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// tokenPayload decodes the token's undocumented payload, the middle of three
// '.'-separated parts, base64 JSON (either alphabet, padded or not), or nil.
func tokenPayload(token string) map[string]json.RawMessage {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil
	}
	seg := strings.TrimRight(parts[1], "=")
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(seg)
	}
	var p map[string]json.RawMessage
	if err != nil || json.Unmarshal(raw, &p) != nil {
		return nil
	}
	return p
}

// legacyTokenHint is the hint of a refused v1 call when the token looks like
// a legacy v0 token: "bot": true and no "_t", which every project token has.
const legacyTokenHint = `the token looks like a legacy v0 bot token (its payload has "bot" and no "_t"); ` +
	`v1 needs a project token, while a legacy token still works with Client.Legacy()`

// tokenHint returns the hint for a refused v1 call made with token, or "".
func tokenHint(token string) string {
	p := tokenPayload(token) // nil reads as empty
	_, project := p["_t"]
	if bot, ok := p["bot"]; ok && !project && strings.TrimSpace(string(bot)) == "true" {
		return legacyTokenHint
	}
	return ""
}
