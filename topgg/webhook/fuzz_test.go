package webhook_test

import (
	"errors"
	"testing"

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
		if ev.Type != webhook.TypeVoteCreate || v.PlatformID == "" || v.Weight < 1 || v.Version != version {
			t.Fatalf("v%d: vote %+v", version, v)
		}
		if version == 1 && (v.ID == "" || v.CreatedAt.IsZero() || v.ExpiresAt.IsZero()) {
			t.Fatalf("v1 vote without id or times: %+v", v)
		}
	}
}
