package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/topgg"
)

// wireData is the union of the data members of every known v1 type (they do
// not clash).
type wireData struct {
	ID            string            `json:"id"`
	Weight        int               `json:"weight"`
	CreatedAt     time.Time         `json:"created_at"`
	ExpiresAt     time.Time         `json:"expires_at"`
	Project       Project           `json:"project"`
	User          User              `json:"user"`
	Query         map[string]string `json:"query"`
	ConnectionID  string            `json:"connection_id"`
	WebhookSecret Secret            `json:"webhook_secret"`
}

// Decode decodes a v1 body ({"type": ..., "data": {...}}), checking no
// signature; a body that is no event, or lacks a required member, wraps [ErrMalformedBody].
func Decode(body []byte) (Event, error) {
	var w struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return Event{}, malformed(err)
	}
	ev := Event{Type: w.Type, Version: 1}
	switch w.Type {
	case "":
		return Event{}, fmt.Errorf("%w: no type", ErrMalformedBody)
	case "vote.create", "webhook.test", "integration.create", "integration.delete":
	default:
		ev.Data = w.Data // a copy: json.RawMessage copies what it decodes
		return ev, nil
	}
	var d wireData
	if len(w.Data) > 0 {
		if err := json.Unmarshal(w.Data, &d); err != nil {
			return Event{}, malformed(err)
		}
	}
	switch w.Type {
	case "vote.create":
		v, err := d.vote()
		ev.Vote = v
		return ev, err
	case "webhook.test":
		ev.Test = &Test{User: d.User, Project: d.Project}
	case "integration.create":
		if d.ConnectionID == "" || d.WebhookSecret == "" {
			return Event{}, fmt.Errorf("%w: integration.create needs data.connection_id and data.webhook_secret", ErrMalformedBody)
		}
		ev.IntegrationCreate = &IntegrationCreate{ConnectionID: d.ConnectionID, WebhookSecret: d.WebhookSecret, Project: d.Project, User: d.User}
	default: // "integration.delete"
		if d.ConnectionID == "" {
			return Event{}, fmt.Errorf("%w: integration.delete needs data.connection_id", ErrMalformedBody)
		}
		ev.IntegrationDelete = &IntegrationDelete{ConnectionID: d.ConnectionID}
	}
	return ev, nil
}

// vote checks a vote.create's data and normalizes it.
func (d *wireData) vote() (*Vote, error) {
	switch {
	case d.ID == "":
		return nil, fmt.Errorf("%w: vote.create needs data.id", ErrMalformedBody)
	case d.User.PlatformID == "":
		return nil, fmt.Errorf("%w: vote.create needs data.user.platform_id", ErrMalformedBody)
	case d.CreatedAt.IsZero() || d.ExpiresAt.IsZero():
		return nil, fmt.Errorf("%w: vote.create needs data.created_at and data.expires_at", ErrMalformedBody)
	case d.Weight < 0:
		return nil, fmt.Errorf("%w: vote.create with a negative weight", ErrMalformedBody)
	}
	return &Vote{
		Vote: topgg.Vote{
			UserID:     d.User.ID,
			PlatformID: d.User.PlatformID,
			Weight:     max(d.Weight, 1),  // absent counts 1
			CreatedAt:  d.CreatedAt.UTC(), // "+00:00" may parse as Local
			ExpiresAt:  d.ExpiresAt.UTC(),
		},
		Version:           1,
		ID:                d.ID,
		UserName:          d.User.Name,
		AvatarURL:         d.User.AvatarURL,
		ProjectID:         d.Project.ID,
		ProjectPlatformID: d.Project.PlatformID,
		Query:             d.Query,
	}, nil
}

// decodeLegacy decodes a v0 body ({bot | guild, user, type, isWeekend,
// query}): "upvote" and "test" become a vote.create Event (Vote.Test for
// "test"); another type keeps the body in Event.Data.
func decodeLegacy(body []byte) (Event, error) {
	var w struct {
		Bot, Guild, User, Type, Query string
		IsWeekend                     bool `json:"isWeekend"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return Event{}, malformed(err)
	}
	switch w.Type {
	case "upvote", "test":
	case "":
		return Event{}, fmt.Errorf("%w: no type", ErrMalformedBody)
	default:
		return Event{Type: w.Type, Data: bytes.Clone(body)}, nil
	}
	if w.User == "" || (w.Bot == "" && w.Guild == "") {
		return Event{}, fmt.Errorf("%w: a v0 vote needs user and bot or guild", ErrMalformedBody)
	}
	v := &Vote{Vote: topgg.Vote{PlatformID: w.User, Weight: 1}, ProjectPlatformID: w.Bot, Query: parseQuery(w.Query), Test: w.Type == "test"}
	if w.Bot == "" {
		v.ProjectPlatformID, v.Guild = w.Guild, true
	}
	if w.IsWeekend {
		v.Weight = 2
	}
	return Event{Type: "vote.create", Vote: v}, nil
}

// parseQuery turns "?a=b&c=d" into {a: b, c: d} (first value of each key);
// nil when there is nothing.
func parseQuery(q string) map[string]string {
	vals, _ := url.ParseQuery(strings.TrimPrefix(q, "?")) // keeps the pairs that parse
	if len(vals) == 0 {
		return nil
	}
	m := make(map[string]string, len(vals))
	for k, vs := range vals {
		m[k] = vs[0]
	}
	return m
}

// malformed wraps a JSON error without its text, which may quote the body.
func malformed(err error) error {
	if syn, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("%w: invalid JSON at offset %d", ErrMalformedBody, syn.Offset)
	}
	if typ, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Errorf("%w: %s has the wrong JSON type (%s)", ErrMalformedBody, typ.Field, typ.Value)
	}
	if _, ok := errors.AsType[*time.ParseError](err); ok {
		return fmt.Errorf("%w: a timestamp is not RFC 3339", ErrMalformedBody)
	}
	return fmt.Errorf("%w: not a JSON event", ErrMalformedBody)
}
