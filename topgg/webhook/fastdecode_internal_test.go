package webhook

import (
	"encoding/json"
	"reflect"
	"testing"
)

const wireVote = `{"type":"vote.create","data":{"id":"808499215864008704","weight":1,` +
	`"created_at":"2026-02-09T00:47:14.2510149+00:00","expires_at":"2026-02-09T12:47:14.2510149+00:00",` +
	`"project":{"id":"803190510032756736","type":"bot","platform":"discord","platform_id":"160105994217586689"},` +
	`"user":{"id":"900000000000000001","platform_id":"160105994217586689","name":"alice","avatar_url":"https://cdn.example/a.png"},` +
	`"query":{"ref":"abc"}}}`

var fastSeeds = []string{
	wireVote,
	" \n" + wireVote + "\t\r\n",
	`{"data":{"user":{"name":"Zoë","platform_id":"1"},"id":"2","weight":-0,"query":{}},"type":"vote.create"}`,
	`{"type":"webhook.test","data":{"user":{"id":"1","platform_id":"2","name":"a","avatar_url":"u"},"project":{"id":"3","type":"bot","platform":"discord","platform_id":"4"}}}`,
	`{"type":"integration.create","data":{"connection_id":"112402021105124","webhook_secret":"whs_abcd","project":{"id":"1"},"user":{"id":"2"}}}`,
	`{"type":"integration.delete","data":{"connection_id":"112402021105124"}}`,
	`{"type":"vote.create","type":"x","data":{"query":{"a":"1"}},"data":{"query":{"b":"2"},"project":{"id":"1"}}}`,
	`{}`,
}

// The fast path takes the bodies Top.gg sends, or the benchmark measures
// the wrong decoder.
func TestFastDecodeTakesWireBodies(t *testing.T) {
	for _, body := range fastSeeds {
		var w wireEvent
		if !fastDecode([]byte(body), &w) {
			t.Errorf("fast path refused %s", body)
		}
	}
	for _, body := range []string{
		`{"type":"vote.create","data":{"id":null}}`,             // null
		`{"type":"vote.create","data":{"ID":"1"}}`,              // a key encoding/json folds
		`{"type":"vote.create","data":{"source":"web"}}`,        // an unknown member
		`{"type":"vote.create","data":{"id":"a\"b"}}`,           // an escape
		`{"type":"vote.create","data":{"weight":1.0}}`,          // a fraction
		`{"type":"vote.create","data":{"id":"1"}} x`,            // trailing data
		`{"type":"vote.create","data":{"id":"1"}`,               // truncated
		"{\"type\":\"vote.create\",\"data\":{\"id\":\"\xff\"}}", // invalid UTF-8
	} {
		var w wireEvent
		if fastDecode([]byte(body), &w) {
			t.Errorf("fast path took %s", body)
		}
	}
}

// FuzzFastDecode: whatever the fast path takes, encoding/json decodes to the
// same value.
func FuzzFastDecode(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast wireEvent
		if !fastDecode(body, &fast) {
			return
		}
		var ref wireEvent
		if err := json.Unmarshal(body, &ref); err != nil {
			t.Fatalf("fast path took %q, encoding/json refuses it: %v", body, err)
		}
		if !reflect.DeepEqual(fast, ref) {
			t.Fatalf("fast path and encoding/json differ on %q:\n%#v\n%#v", body, fast, ref)
		}
	})
}
