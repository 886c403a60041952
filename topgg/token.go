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
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding} {
		if raw, err = enc.DecodeString(seg); err == nil {
			break
		}
	}
	if err != nil {
		return nil
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
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
	p := tokenPayload(token)
	if p == nil {
		return ""
	}
	_, project := p["_t"]
	if bot, ok := p["bot"]; ok && !project && strings.TrimSpace(string(bot)) == "true" {
		return legacyTokenHint
	}
	return ""
}
