package webhook_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/dblkit/go-topgg/topgg/webhook"
)

// FuzzDecode: Decode and DecodeLegacy never panic; a success is an event
// with a type and at most one payload, a vote has the ids a store keys on,
// and a failure is ErrMalformedBody.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		voteBody,
		`{"type":"webhook.test","data":{"user":{"id":"1","platform_id":"2"},"project":{"id":"3"}}}`,
		`{"type":"integration.create","data":{"connection_id":"1","webhook_secret":"whs_x","project":{},"user":{}}}`,
		`{"type":"integration.delete","data":{"connection_id":"1"}}`,
		`{"type":"review.create","data":[1,2,3]}`,
		`{"bot":"1","user":"2","type":"upvote","isWeekend":true,"query":"?a=b"}`,
		`{"guild":"1","user":"2","type":"test","query":"%zz"}`,
		`{"type":"vote.create","data":{"id":"1","created_at":"2026-02-09T00:47:14Z","expires_at":"x"}}`,
		`null`, `[]`, `{}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for version, decode := range []func([]byte) (webhook.Event, error){webhook.DecodeLegacy, webhook.Decode} {
			ev, err := decode(body)
			if err != nil {
				if !errors.Is(err, webhook.ErrMalformedBody) {
					t.Fatalf("v%d: error %v does not wrap ErrMalformedBody", version, err)
				}
				continue
			}
			checkEvent(t, version, ev)
		}
	})
}

// checkEvent checks what a decoded event of any type must hold.
//
// gocyclo 15: one case per event type, each with its own fields.
func checkEvent(t *testing.T, version int, ev webhook.Event) {
	t.Helper()
	if ev.Type == "" || ev.Version != version {
		t.Fatalf("v%d: event without type or with version %d", version, ev.Version)
	}
	set := 0
	for _, p := range []bool{ev.Vote != nil, ev.Test != nil, ev.IntegrationCreate != nil, ev.IntegrationDelete != nil, ev.Data != nil} {
		if p {
			set++
		}
	}
	if set > 1 {
		t.Fatalf("v%d: %d payloads in one event", version, set)
	}
	if v := ev.Vote; v != nil {
		if ev.Type != "vote.create" || v.PlatformID == "" || v.Weight < 1 || v.Version != version {
			t.Fatalf("v%d: vote %+v", version, v)
		}
		if version == 1 && (v.ID == "" || v.CreatedAt.IsZero() || v.ExpiresAt.IsZero()) {
			t.Fatalf("v1 vote without id or times: %+v", v)
		}
	}
}

// FuzzDecodeRoundTrip: an event Decode accepts, written back in Top.gg's wire
// shape, decodes to the same event: Decode keeps every member it reads and
// invents none (it replaced FuzzFastDecode, which compared the hand-written
// decoder removed in 0.3.0 with encoding/json).
func FuzzDecodeRoundTrip(f *testing.F) {
	for _, seed := range []string{
		voteBody,
		" \n" + voteBody + "\t\r\n",
		`{"data":{"user":{"name":"Zoë","platform_id":"1"},"id":"2","weight":-0,"created_at":"2026-02-09T00:47:14Z","expires_at":"2026-02-09T12:47:14Z","query":{}},"type":"vote.create"}`,
		`{"type":"vote.create","data":{"id":"a\"b\u00e9","user":{"platform_id":"1"},"created_at":"2026-02-09T00:47:14.1+01:00","expires_at":"2026-02-09T12:47:14Z","query":null}}`,
		`{"type":"webhook.test","data":{"user":{"id":"1","platform_id":"2","name":"a","avatar_url":"u"},"project":{"id":"3","type":"bot","platform":"discord","platform_id":"4"}}}`,
		`{"type":"integration.create","data":{"connection_id":"112402021105124","webhook_secret":"whs_abcd","project":{"id":"1"},"user":{"id":"2"}}}`,
		`{"type":"integration.delete","data":{"connection_id":"112402021105124"}}`,
		`{"type":"review.create","data":{"b": [1, 2], "a":"x"}}`,
		`{"type":"vote.create","type":"x","data":{"query":{"a":"1"}},"data":{"query":{"b":"2"},"project":{"id":"1"}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := webhook.Decode(body)
		if err != nil {
			return
		}
		again, err := webhook.Decode(wireBody(t, ev))
		if err != nil {
			t.Fatalf("Decode took %q, but not its event written back: %v", body, err)
		}
		ev.Data, again.Data = compact(t, ev.Data), compact(t, again.Data)
		if !reflect.DeepEqual(ev, again) {
			t.Fatalf("round trip of %q differs:\n%#v\n%#v", body, ev, again)
		}
	})
}

// wireBody writes ev as Top.gg sends it.
func wireBody(t *testing.T, ev webhook.Event) []byte {
	t.Helper()
	type user struct {
		ID         string `json:"id"`
		PlatformID string `json:"platform_id"`
		Name       string `json:"name"`
		AvatarURL  string `json:"avatar_url"`
	}
	var data any // nil: an unknown type sent without data
	switch {
	case ev.Vote != nil:
		v := ev.Vote
		data = map[string]any{
			"id": v.ID, "weight": v.Weight, "query": v.Query,
			"created_at": v.CreatedAt.Format(time.RFC3339Nano), "expires_at": v.ExpiresAt.Format(time.RFC3339Nano),
			"project": webhook.Project{ID: v.ProjectID, PlatformID: v.ProjectPlatformID},
			"user":    user{ID: v.UserID, PlatformID: v.PlatformID, Name: v.UserName, AvatarURL: v.AvatarURL},
		}
	case ev.Test != nil:
		data = map[string]any{"project": ev.Test.Project, "user": ev.Test.User}
	case ev.IntegrationCreate != nil:
		ic := ev.IntegrationCreate
		data = map[string]any{"connection_id": ic.ConnectionID, "webhook_secret": string(ic.WebhookSecret),
			"project": ic.Project, "user": ic.User}
	case ev.IntegrationDelete != nil:
		data = map[string]any{"connection_id": ev.IntegrationDelete.ConnectionID}
	}
	envelope := map[string]any{"type": ev.Type}
	if ev.Data != nil {
		data = ev.Data
	}
	if data != nil {
		envelope["data"] = data
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Data is compared as sent
	if err := enc.Encode(envelope); err != nil {
		t.Fatalf("writing %#v back: %v", ev, err)
	}
	return b.Bytes()
}

func compact(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("Data is not JSON: %v", err)
	}
	return b.Bytes()
}
