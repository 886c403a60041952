package webhook_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

func TestDecodeVoteCreate(t *testing.T) {
	t.Parallel()
	ev, err := webhook.Decode([]byte(voteBody))
	require.NoError(t, err)
	assert.Equal(t, webhook.Event{Type: "vote.create", Version: 1, Vote: ptr(wantVote())}, ev)
	assert.Equal(t, time.UTC, ev.Vote.CreatedAt.Location(), "times are UTC whatever the offset's form")

	// Weekend weight, no query, a Z timestamp with 6 digits, a non-UTC offset.
	body := `{"type":"vote.create","data":{"id":"9","weight":2,"created_at":"2026-01-17T23:36:06.34732Z",` +
		`"expires_at":"2026-01-18T13:36:06.3473200+02:00","project":{"id":"p","type":"server","platform":"discord","platform_id":"g"},` +
		`"user":{"id":"u","platform_id":"d"}}}`
	ev, err = webhook.Decode([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, webhook.Vote{
		Vote: topgg.Vote{
			UserID:     "u",
			PlatformID: "d",
			Weight:     2,
			CreatedAt:  time.Date(2026, 1, 17, 23, 36, 6, 347320000, time.UTC),
			ExpiresAt:  time.Date(2026, 1, 18, 11, 36, 6, 347320000, time.UTC),
		},
		Version:           1,
		ID:                "9",
		ProjectID:         "p",
		ProjectPlatformID: "g",
	}, *ev.Vote)

	// No weight counts 1; members Top.gg may add later are ignored.
	body = strings.Replace(voteBody, `"weight":1,`, `"source":"web",`, 1)
	ev, err = webhook.Decode([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, 1, ev.Vote.Weight)
}

func TestDecodeWebhookTest(t *testing.T) {
	t.Parallel()
	body := `{"type":"webhook.test","data":{"user":{"id":"900000000000000001","platform_id":"160105994217586689",` +
		`"name":"alice","avatar_url":"https://cdn.example/a.png"},` +
		`"project":{"id":"803190510032756736","type":"bot","platform":"discord","platform_id":"264811613708746752"}}}`
	ev, err := webhook.Decode([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, webhook.Event{Type: "webhook.test", Version: 1, Test: &webhook.Test{
		User:    webhook.User{ID: "900000000000000001", PlatformID: "160105994217586689", Name: "alice", AvatarURL: "https://cdn.example/a.png"},
		Project: webhook.Project{ID: "803190510032756736", Type: "bot", Platform: "discord", PlatformID: "264811613708746752"},
	}}, ev)
}

func TestDecodeIntegrationEvents(t *testing.T) {
	t.Parallel()
	body := `{"type":"integration.create","data":{"connection_id":"112402021105124","webhook_secret":"whs_abcd",` +
		`"project":{"id":"1230954036934033243","type":"bot","platform":"discord","platform_id":"1026525568344264724"},` +
		`"user":{"id":"3949456393249234923","platform_id":"3949456393249234923","name":"username","avatar_url":"<avatar url>"}}}`
	ev, err := webhook.Decode([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, webhook.Event{Type: "integration.create", Version: 1, IntegrationCreate: &webhook.IntegrationCreate{
		ConnectionID:  "112402021105124",
		WebhookSecret: "whs_abcd",
		Project:       webhook.Project{ID: "1230954036934033243", Type: "bot", Platform: "discord", PlatformID: "1026525568344264724"},
		User:          webhook.User{ID: "3949456393249234923", PlatformID: "3949456393249234923", Name: "username", AvatarURL: "<avatar url>"},
	}}, ev)

	ev, err = webhook.Decode([]byte(`{"type":"integration.delete","data":{"connection_id":"112402021105124"}}`))
	require.NoError(t, err)
	assert.Equal(t, webhook.Event{Type: "integration.delete", Version: 1,
		IntegrationDelete: &webhook.IntegrationDelete{ConnectionID: "112402021105124"}}, ev)
}

func TestDecodeUnknownTypesRaw(t *testing.T) {
	t.Parallel()
	for _, data := range []string{
		`{"stars":5,"text":"great"}`,
		`{"user":"not an object","query":[1,2]}`, // does not fit the known members
		`"just a string"`,
		`null`,
	} {
		ev, err := webhook.Decode([]byte(`{"type":"review.create","data":` + data + `}`))
		require.NoError(t, err, data)
		assert.Equal(t, webhook.Event{Type: "review.create", Version: 1, Data: json.RawMessage(data)}, ev)
	}
	ev, err := webhook.Decode([]byte(`{"type":"review.create"}`))
	require.NoError(t, err)
	assert.Equal(t, "review.create", ev.Type)
}

func TestDecodeRefusesMalformed(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"empty":                      ``,
		"not JSON":                   `vote`,
		"truncated":                  voteBody[:len(voteBody)-2],
		"array":                      `[{"type":"vote.create"}]`,
		"no type":                    `{"data":{"id":"1"}}`,
		"type not a string":          `{"type":1,"data":{}}`,
		"vote without id":            strings.Replace(voteBody, `"id":"808499215864008704",`, ``, 1),
		"vote without platform id":   strings.Replace(voteBody, `"platform_id":"160105994217586689","name"`, `"name"`, 1),
		"vote without created_at":    strings.Replace(voteBody, `"created_at":"2026-02-09T00:47:14.2510149+00:00",`, ``, 1),
		"vote with negative weight":  strings.Replace(voteBody, `"weight":1`, `"weight":-1`, 1),
		"vote with string weight":    strings.Replace(voteBody, `"weight":1`, `"weight":"1"`, 1),
		"vote with data a string":    `{"type":"vote.create","data":"x"}`,
		"integration without secret": `{"type":"integration.create","data":{"connection_id":"1"}}`,
		"integration.delete empty":   `{"type":"integration.delete","data":{}}`,
		"vote with non-string query": strings.Replace(voteBody, `"ref":"abc"`, `"ref":{"a":1}`, 1),
		"vote with unparsable time":  strings.Replace(voteBody, `2026-02-09T12:47:14.2510149+00:00`, `12/02/2026`, 1),
	} {
		_, err := webhook.Decode([]byte(body))
		assert.ErrorIs(t, err, webhook.ErrMalformedBody, name)
	}
}

func TestDecodeErrorsQuoteNoBody(t *testing.T) {
	t.Parallel()
	body := `{"type":"integration.create","data":{"connection_id":"1","webhook_secret":"whs_leak","created_at":"whs_leak2"}}`
	_, err := webhook.Decode([]byte(body))
	require.ErrorIs(t, err, webhook.ErrMalformedBody)
	assert.NotContains(t, err.Error(), "whs_leak")
}

func TestDecodeLegacy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       webhook.Event
	}{
		{"bot upvote", `{"bot":"264811613708746752","user":"160105994217586689","type":"upvote","isWeekend":false,"query":""}`,
			webhook.Event{Type: "vote.create", Vote: &webhook.Vote{Vote: topgg.Vote{PlatformID: "160105994217586689", Weight: 1}, ProjectPlatformID: "264811613708746752"}}},
		{"weekend with query", `{"bot":"264811613708746752","user":"160105994217586689","type":"upvote","isWeekend":true,"query":"?ref=abc&ref=def&x=a%20b"}`,
			webhook.Event{Type: "vote.create", Vote: &webhook.Vote{
				Vote:              topgg.Vote{PlatformID: "160105994217586689", Weight: 2},
				ProjectPlatformID: "264811613708746752",
				Query:             map[string]string{"ref": "abc", "x": "a b"},
			}}},
		{"server vote", `{"guild":"1084539287597551686","user":"160105994217586689","type":"upvote","isWeekend":false}`,
			webhook.Event{Type: "vote.create", Vote: &webhook.Vote{Vote: topgg.Vote{PlatformID: "160105994217586689", Weight: 1}, ProjectPlatformID: "1084539287597551686", Guild: true}}},
		{"test", `{"bot":"264811613708746752","user":"160105994217586689","type":"test","isWeekend":false,"query":"a=b"}`,
			webhook.Event{Type: "vote.create", Vote: &webhook.Vote{
				Vote:              topgg.Vote{PlatformID: "160105994217586689", Weight: 1},
				ProjectPlatformID: "264811613708746752",
				Query:             map[string]string{"a": "b"},
				Test:              true,
			}}},
		{"bad query keeps what parses", `{"bot":"1","user":"2","type":"upvote","query":"?a=b&c=%zz"}`,
			webhook.Event{Type: "vote.create", Vote: &webhook.Vote{Vote: topgg.Vote{PlatformID: "2", Weight: 1}, ProjectPlatformID: "1", Query: map[string]string{"a": "b"}}}},
		{"unknown type", `{"bot":"1","user":"2","type":"downvote"}`,
			webhook.Event{Type: "downvote", Data: json.RawMessage(`{"bot":"1","user":"2","type":"downvote"}`)}},
	} {
		ev, err := webhook.DecodeLegacy([]byte(tc.body))
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, ev, tc.name)
	}
	for name, body := range map[string]string{
		"not JSON":       `bot=1`,
		"no type":        `{"bot":"1","user":"2"}`,
		"no user":        `{"bot":"1","type":"upvote"}`,
		"no bot":         `{"user":"2","type":"upvote"}`,
		"numeric user":   `{"bot":"1","user":2,"type":"upvote"}`,
		"weekend string": `{"bot":"1","user":"2","type":"upvote","isWeekend":"true"}`,
	} {
		_, err := webhook.DecodeLegacy([]byte(body))
		assert.ErrorIs(t, err, webhook.ErrMalformedBody, name)
	}
}

func ptr[T any](v T) *T { return &v }
