package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// wireEvent is a v1 body. Its data is the union of the members of every known
// type (they do not clash), so that a vote.create is decoded in one pass.
type wireEvent struct {
	Type EventType `json:"type"`
	Data wireData  `json:"data"`
}

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

// rawEvent is a v1 body whose data is kept as sent.
type rawEvent struct {
	Type EventType       `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Decode decodes a v1 body ({"type": ..., "data": {...}}) into an Event of
// Version 1. A known type lacking a required member, and a body that is not
// a JSON object with a type, is an error wrapping [ErrMalformedBody]; an
// unknown type is not an error: its data is kept in Event.Data. Decode does
// not check the signature (see [Verify]) and keeps no reference to body.
func Decode(body []byte) (Event, error) {
	var d decoded
	if err := decodeV1(body, &d); err != nil {
		return Event{}, err
	}
	return d.event(), nil
}

// decoded is a decoded delivery. A vote is kept in vote, outside ev, so that
// a Receiver without OnEvent hands it to OnVote without a heap allocation.
type decoded struct {
	ev     Event // ev.Vote is nil
	vote   Vote
	isVote bool
}

// event returns the Event with its Vote.
func (d *decoded) event() Event {
	ev := d.ev
	if d.isVote {
		v := d.vote
		ev.Vote = &v
	}
	return ev
}

func decodeV1(body []byte, d *decoded) error {
	var w wireEvent
	err := json.Unmarshal(body, &w)
	if err == nil {
		return w.fill(body, d)
	}
	// The union may not fit a newer type's data; such a type is still an
	// event, handed over raw.
	var raw rawEvent
	if rerr := json.Unmarshal(body, &raw); rerr != nil || raw.Type == "" || known(raw.Type) {
		return malformed(err)
	}
	d.ev = Event{Type: raw.Type, Version: 1, Data: raw.Data}
	return nil
}

// fill checks a decoded body and makes its event.
func (w *wireEvent) fill(body []byte, out *decoded) error {
	ev := Event{Type: w.Type, Version: 1}
	d := &w.Data
	switch w.Type {
	case TypeVoteCreate:
		if err := d.vote(&out.vote); err != nil {
			return err
		}
		out.isVote = true
	case TypeWebhookTest:
		ev.Test = &Test{User: d.User, Project: d.Project}
	case TypeIntegrationCreate:
		if d.ConnectionID == "" || d.WebhookSecret == "" {
			return fmt.Errorf("%w: integration.create needs data.connection_id and data.webhook_secret", ErrMalformedBody)
		}
		ev.IntegrationCreate = &IntegrationCreate{
			ConnectionID: d.ConnectionID, WebhookSecret: d.WebhookSecret, Project: d.Project, User: d.User,
		}
	case TypeIntegrationDelete:
		if d.ConnectionID == "" {
			return fmt.Errorf("%w: integration.delete needs data.connection_id", ErrMalformedBody)
		}
		ev.IntegrationDelete = &IntegrationDelete{ConnectionID: d.ConnectionID}
	case "":
		return fmt.Errorf("%w: no type", ErrMalformedBody)
	default:
		var raw rawEvent
		if err := json.Unmarshal(body, &raw); err != nil {
			return malformed(err) // unreachable: body decoded above
		}
		ev.Data = raw.Data
	}
	out.ev = ev
	return nil
}

func known(t EventType) bool {
	switch t {
	case TypeVoteCreate, TypeWebhookTest, TypeIntegrationCreate, TypeIntegrationDelete:
		return true
	}
	return false
}

// vote checks a vote.create's data and normalizes it into v.
func (d *wireData) vote(v *Vote) error {
	switch {
	case d.ID == "":
		return fmt.Errorf("%w: vote.create needs data.id", ErrMalformedBody)
	case d.User.PlatformID == "":
		return fmt.Errorf("%w: vote.create needs data.user.platform_id", ErrMalformedBody)
	case d.CreatedAt.IsZero() || d.ExpiresAt.IsZero():
		return fmt.Errorf("%w: vote.create needs data.created_at and data.expires_at", ErrMalformedBody)
	case d.Weight < 0:
		return fmt.Errorf("%w: vote.create with a negative weight", ErrMalformedBody)
	}
	w := d.Weight
	if w == 0 {
		w = 1
	}
	*v = Vote{
		Version:           1,
		ID:                d.ID,
		UserID:            d.User.ID,
		PlatformID:        d.User.PlatformID,
		UserName:          d.User.Name,
		AvatarURL:         d.User.AvatarURL,
		ProjectID:         d.Project.ID,
		ProjectPlatformID: d.Project.PlatformID,
		Weight:            w,
		CreatedAt:         d.CreatedAt.UTC(), // "+00:00" may parse as Local
		ExpiresAt:         d.ExpiresAt.UTC(),
		Query:             d.Query,
	}
	return nil
}

// wireLegacy is a v0 body.
type wireLegacy struct {
	Bot       string `json:"bot"`
	Guild     string `json:"guild"`
	User      string `json:"user"`
	Type      string `json:"type"`
	IsWeekend bool   `json:"isWeekend"`
	Query     string `json:"query"`
}

// DecodeLegacy decodes a v0 body ({bot | guild, user, type, isWeekend,
// query}) into an Event of Version 0. Types "upvote" and "test" become a
// vote.create Event (Vote.Test set for "test"); another type is kept as sent
// with the body in Event.Data. A body that is not such a JSON object, or a
// vote without user or without bot and guild, is an error wrapping
// [ErrMalformedBody]. A query string that does not parse keeps the pairs
// that do. DecodeLegacy keeps no reference to body.
func DecodeLegacy(body []byte) (Event, error) {
	var d decoded
	if err := decodeV0(body, &d); err != nil {
		return Event{}, err
	}
	return d.event(), nil
}

func decodeV0(body []byte, d *decoded) error {
	var w wireLegacy
	if err := json.Unmarshal(body, &w); err != nil {
		return malformed(err)
	}
	switch w.Type {
	case "upvote", "test":
	case "":
		return fmt.Errorf("%w: no type", ErrMalformedBody)
	default:
		d.ev = Event{Type: EventType(w.Type), Data: bytes.Clone(body)}
		return nil
	}
	if w.User == "" || (w.Bot == "" && w.Guild == "") {
		return fmt.Errorf("%w: a v0 vote needs user and bot or guild", ErrMalformedBody)
	}
	d.ev = Event{Type: TypeVoteCreate}
	d.isVote = true
	d.vote = Vote{
		PlatformID:        w.User,
		ProjectPlatformID: w.Bot,
		Weight:            1,
		Query:             parseQuery(w.Query),
		Test:              w.Type == "test",
	}
	if w.Bot == "" {
		d.vote.ProjectPlatformID, d.vote.Guild = w.Guild, true
	}
	if w.IsWeekend {
		d.vote.Weight = 2
	}
	return nil
}

// parseQuery turns "?a=b&c=d" into {a: b, c: d} (first value of each key);
// nil when there is nothing.
func parseQuery(q string) map[string]string {
	if len(q) > 0 && q[0] == '?' {
		q = q[1:]
	}
	if q == "" {
		return nil
	}
	vals, _ := url.ParseQuery(q) // keeps the pairs that parse
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
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var tim *time.ParseError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("%w: invalid JSON at offset %d", ErrMalformedBody, syn.Offset)
	case errors.As(err, &typ):
		return fmt.Errorf("%w: %s has the wrong JSON type (%s)", ErrMalformedBody, typ.Field, typ.Value)
	case errors.As(err, &tim):
		return fmt.Errorf("%w: a timestamp is not RFC 3339", ErrMalformedBody)
	default:
		return fmt.Errorf("%w: not a JSON event", ErrMalformedBody)
	}
}
