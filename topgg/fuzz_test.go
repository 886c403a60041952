package topgg

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// fuzzDecoder checks the decoder of one answer type: it never panics, a failure is a
// *DecodeError with a bounded body, and a success is stable: encoding the value and
// decoding it again gives the same encoding.
func fuzzDecoder[T any](f *testing.F, op route, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	c, err := New("fuzz-token")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v T
		r := &call{route: op}
		_, _, err := c.success(r, &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Body: io.NopCloser(bytes.NewReader(data))}, 1, &v)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("want *DecodeError, got %T %v", err, err)
			}
			if len(de.Body) > maxErrorBody || de.Status != http.StatusOK || de.Op != r.op() || de.Error() == "" {
				t.Fatalf("bad DecodeError %+v", de)
			}
			return
		}
		once, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("a decoded %T does not encode: %v", v, err)
		}
		var again T
		if err := json.Unmarshal(once, &again); err != nil {
			t.Fatalf("re-decoding %s: %v", once, err)
		}
		twice, err := json.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("not stable:\n%s\n%s", once, twice)
		}
	})
}

func FuzzDecodeProject(f *testing.F) {
	fuzzDecoder[Project](f, routeProject,
		`{"id":"803190510032756736","name":"Example Bot","platform":"discord","type":"bot","headline":"Hi","tags":["a"],"votes":42,"votes_total":1337,"review_score":4.5,"review_count":12}`,
		`{"platform":"minecraft","type":"game_server","tags":null,"review_score":1e308}`,
		`{"id":5}`, `[]`, `null`, ``)
}

func FuzzDecodeVotePage(f *testing.F) {
	fuzzDecoder[VotePage](f, routeVotes,
		`{"cursor":"c2","data":[{"user_id":"800506814562787328","platform_id":"146183080879613966","weight":2,"created_at":"2026-01-17T23:36:06.34732Z","expires_at":"2026-01-18T11:36:06.34732Z"}]}`,
		`{"cursor":"","data":[]}`,
		`{"data":[{"created_at":"2026-02-09T00:47:14.2510149+00:00","expires_at":"2026-02-09T12:47:14+00:00"}]}`,
		`{"data":[{"created_at":"0000-01-01T00:00:00+23:59"}]}`,
		`{"data":[{"created_at":"2026-01-17 23:36"}]}`)
}

func FuzzDecodeVoteStatus(f *testing.F) {
	fuzzDecoder[Vote](f, routeVoteStatus,
		`{"created_at":"2026-01-17T23:36:06.34732Z","expires_at":"2026-01-18T11:36:06.34732Z","weight":1}`,
		`{"created_at":"2026-01-17T23:36:06Z","expires_at":null,"weight":2}`,
		`{"weight":"2"}`)
}

func FuzzDecodeAnnouncement(f *testing.F) {
	fuzzDecoder[Announcement](f, routeAnnouncements,
		`{"title":"v2","content":"Slash commands everywhere.","category":"event","created_at":"2026-01-17T23:36:06.347Z"}`,
		`{"title":"v2","content":"x","category":"something_new"}`)
}

func FuzzDecodeBot(f *testing.F) {
	fuzzDecoder[Bot](f, routeBot,
		`{"id":"264811613708746752","clientid":"264811613708746752","username":"Luca","discriminator":"1375","avatar":null,"defAvatar":"6debd47ed13483642cf09e832ed0bc1b","lib":"discord.js","prefix":"-","shortdesc":"Hi","longdesc":null,"tags":["Fun"],"website":null,"support":"KYZsaFb","github":null,"owners":["129908908096487424"],"guilds":[],"invite":null,"date":"2017-04-26T18:08:17.125Z","server_count":2,"shard_count":null,"certifiedBot":false,"vanity":null,"points":397,"monthlyPoints":19,"donatebotguildid":""}`,
		`{"shards":[1,2],"server_count":1.5}`, `{"date":""}`)
}

func FuzzDecodeBotList(f *testing.F) {
	fuzzDecoder[BotList](f, routeBots,
		`{"results":[{"id":"1","username":"a"},{"id":"2"}],"limit":2,"offset":0,"count":2,"total":10}`,
		`{"results":null,"limit":"2"}`)
}

func FuzzDecodeBotStats(f *testing.F) {
	fuzzDecoder[BotStats](f, routeBotStats,
		`{"server_count":30,"shards":[10,20],"shard_count":2}`, `{"shards":[]}`, `{"shards":[-1,1e3]}`)
}

func FuzzDecodeVoters(f *testing.F) {
	fuzzDecoder[[]Voter](f, routeBotVoters,
		`[{"username":"voter","id":"146183080879613966","avatar":"a_b"}]`, `[]`, `[null]`, `{}`)
}

func FuzzDecodeVoteCheck(f *testing.F) {
	fuzzDecoder[voteCheck](f, routeBotCheck,
		`{"voted":1}`, `{"voted":0}`, `{"voted":true}`, `{"voted":null}`, `{"voted":2}`, `{"voted":"1"}`, `{"voted": 1 }`)
}

// fuzzToken is a project token as the service issues them (three base64 parts).
const fuzzToken = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJfdCI6IiIsImlkIjoiMzY0ODA2MDI5ODc2NTU1Nzc2In0=.c2lnbmF0dXJlK3NpZ25hdHVyZS9zaWduYXR1cmU"

// secretsOf lists what must never be shown of token: itself and its long parts.
func secretsOf(token string) []string {
	out := []string{token}
	for _, p := range strings.Split(token, ".") {
		if len(p) >= httpx.MinSecretPart {
			out = append(out, p)
		}
	}
	return out
}

// FuzzNewAPIError: any error body gives an APIError with a bounded body, a message
// and the status it was given, with no trace of the token anywhere; never a panic.
func FuzzNewAPIError(f *testing.F) {
	for _, s := range []string{
		`{"type":"about:blank","title":"Unprocessable Entity","status":422,"detail":"bad"}`,
		`{"error":"Not found"}`, `{"message":"old"}`, `{"detail":5,"title":null}`, `<html>`, ``, `[1,2]`, `"str"`,
		`{"detail":"Authorization: Bearer ` + fuzzToken + `"}`,
		`{"error":"` + strings.ReplaceAll(fuzzToken, "=", `\u003d`) + `"}`,
		`{"title":"\u0065` + fuzzToken[1:] + `"}`,
		`Bearer ` + fuzzToken[:40],
	} {
		f.Add(422, []byte(s), false)
	}
	f.Add(400, []byte(`{"detail":"`+strings.Repeat("x", maxErrorBody-20)+fuzzToken+`"}`), true)
	scrub := httpx.NewScrubber(fuzzToken)
	f.Fuzz(func(t *testing.T, status int, data []byte, truncated bool) {
		if len(data) > maxErrorBody {
			data, truncated = data[:maxErrorBody], true
		}
		e := newAPIError("GET /v1/projects/@me", status, data, truncated, 1, scrub)
		if e.StatusCode != status || len(e.Body) > maxErrorBody {
			t.Fatalf("bad APIError %+v", e)
		}
		kept := e.Body // up to the first mark, which the bound may have cut
		if i := bytes.Index(kept, []byte(httpx.Redacted[:len(httpx.Redacted)-1])); i >= 0 {
			kept = kept[:i]
		}
		if !bytes.HasPrefix(data, kept) {
			t.Fatalf("body %.200q is not the start of %.200q", e.Body, data)
		}
		if e.Error() == "" {
			t.Fatal("empty message")
		}
		for _, shown := range []string{e.Error(), string(e.Body), e.Type, e.Title, e.Detail, fmt.Sprintf("%+v", *e)} {
			for _, secret := range secretsOf(fuzzToken) {
				if strings.Contains(shown, secret) {
					t.Fatalf("token shown in %q", shown)
				}
			}
		}
		_ = errors.Is(e, ErrUnauthorized)
		_ = errors.Is(e, ErrNotFound)
	})
}

// FuzzTokenPayload: never panics; a well-formed payload is read whatever
// base64 alphabet and padding carry it.
func FuzzTokenPayload(f *testing.F) {
	f.Add("h.eyJfdCI6IiIsImlkIjoiMzY0ODA2MDI5ODc2NTU1Nzc2In0=.s", "364806029876555776")
	f.Add("a.b.c", "1")
	f.Add("..", "")
	f.Fuzz(func(t *testing.T, token, id string) {
		if h := tokenHint(token); h != "" && h != legacyTokenHint {
			t.Fatalf("unexpected hint %q", h)
		}
		if err := checkToken(token); err != nil && len(token) >= httpx.MinSecretPart && strings.Contains(err.Error(), token) {
			t.Fatalf("checkToken quotes the token: %v", err)
		}
		if !utf8.ValidString(id) {
			return
		}
		payload, err := json.Marshal(map[string]string{"_t": "", "id": id})
		if err != nil {
			t.Fatal(err)
		}
		legacy, err := json.Marshal(map[string]any{"id": id, "bot": true, "iat": 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			tok := "hdr." + enc.EncodeToString(payload) + ".sig"
			if got, _ := tokenPayload(tok)["id"]; string(got) != string(mustJSON(t, id)) {
				t.Fatalf("%s: got %s, want %q", tok, got, id)
			}
			if h := tokenHint(tok); h != "" {
				t.Fatalf("%s: a project token got the hint %q", tok, h)
			}
			if h := tokenHint("hdr." + enc.EncodeToString(legacy) + ".sig"); h != legacyTokenHint {
				t.Fatalf("%s: a legacy token got the hint %q", legacy, h)
			}
		}
	})
}

// FuzzRetryAfter: any header and body give a wait in [0, maxRetryAfter], and a
// header that parses wins over the body.
func FuzzRetryAfter(f *testing.F) {
	now := time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)
	for _, s := range [][2]string{
		{"1", ""}, {"1.5", ""}, {"-1", ""}, {"1e400", ""}, {"Inf", ""}, {"NaN", ""},
		{"Sat, 17 Jan 2026 12:00:30 GMT", ""}, {"Mon, 02 Jan 0001 15:04:05 GMT", ""},
		{"", `{"retry-after": 5}`}, {"", `{"retry-after": "5"}`}, {"", `{"retry-after": " 5 "}`}, {"", `{"retry-after": 1e999}`},
		{"", `{"retry-after": -9223372036854775808}`}, {"x", `{"retry-after":[1]}`},
	} {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		d, ok := retryAfter(header, body, now)
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("%q %q: wait %v out of range", header, body, d)
		}
		if !ok && d != 0 {
			t.Fatalf("%q %q: no value but wait %v", header, body, d)
		}
		if hd, hok := parseRetryAfterHeader(header, now); hok && (hd != d || !ok) {
			t.Fatalf("%q: the header's %v must win, got %v", header, hd, d)
		}
		if bd, bok := parseRetryAfterBody(body); bok && bd > maxRetryAfter {
			t.Fatalf("%q: body wait %v out of range", body, bd)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// retryAfter reads the header, then the body, as the client does on a 429.
func retryAfter(header string, body []byte, now time.Time) (time.Duration, bool) {
	if d, ok := parseRetryAfterHeader(header, now); ok {
		return d, true
	}
	return parseRetryAfterBody(body)
}
