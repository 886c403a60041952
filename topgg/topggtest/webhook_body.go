package topggtest

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/dblkit/go-topgg/topgg/webhook"
)

// webhookVoteIDBase makes vote ids that look like Top.gg's snowflakes.
const webhookVoteIDBase = 808499215864008704

// WebhookVoteID returns the id of the vote.create webhook of the n-th vote
// added (from 1). The vote history has no id.
func WebhookVoteID(n int64) string { return strconv.FormatInt(webhookVoteIDBase+n, 10) }

type webhookVote struct {
	ID        string            `json:"id"`
	Weight    int               `json:"weight"`
	CreatedAt string            `json:"created_at"`
	ExpiresAt string            `json:"expires_at"`
	Project   webhook.Project   `json:"project"`
	User      webhook.User      `json:"user"`
	Query     map[string]string `json:"query,omitempty"`
}

type webhookEnvelope struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

func (s *Server) webhookProject() webhook.Project {
	p := s.cfg.project
	return webhook.Project{ID: p.ID, Type: string(p.Type), Platform: string(p.Platform), PlatformID: p.PlatformID}
}

// voter describes the user of a vote, named after the ids.
func voter(userID, platformID string) webhook.User {
	return webhook.User{
		ID: userID, PlatformID: platformID, Name: "voter" + platformID,
		AvatarURL: "https://cdn.discordapp.com/embed/avatars/0.png",
	}
}

// legacyBody is a v0 body: bot, or guild for a server project.
func (s *Server) legacyBody(user, typ string, weekend bool, query string) []byte {
	if query = strings.TrimPrefix(query, "?"); query != "" {
		query = "?" + query
	}
	kind := "bot"
	if s.cfg.project.Type == "server" {
		kind = "guild"
	}
	return mustJSON(map[string]any{kind: s.cfg.project.PlatformID, "user": user, "type": typ, "isWeekend": weekend, "query": query})
}

// queryObject is the v1 form of a query: each parameter's first value, nil if none.
func queryObject(query string) map[string]string {
	vals, _ := url.ParseQuery(strings.TrimPrefix(query, "?")) // keeps what parses
	if len(vals) == 0 {
		return nil
	}
	m := make(map[string]string, len(vals))
	for k, v := range vals {
		m[k] = v[0]
	}
	return m
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("topggtest: encoding a webhook body: " + err.Error()) // only strings and numbers
	}
	return b
}

// deliverVote sends the vote.create of a vote just added, under s.mu.
func (s *Server) deliverVote(v Vote, query string, seq int64) {
	s.hooks.mu.Lock()
	none := len(s.hooks.targets) == 0
	s.hooks.mu.Unlock()
	if none {
		return // no receiver: adding many votes stays cheap
	}
	// As Top.gg's webhooks write times: 7 fractional digits and "+00:00".
	const layout = "2006-01-02T15:04:05.0000000"
	v1 := mustJSON(webhookEnvelope{Type: "vote.create", Data: webhookVote{
		ID: WebhookVoteID(seq), Weight: v.Weight,
		CreatedAt: v.CreatedAt.UTC().Format(layout) + "+00:00", ExpiresAt: v.ExpiresAt.UTC().Format(layout) + "+00:00",
		Project: s.webhookProject(), User: voter(v.UserID, v.PlatformID), Query: queryObject(query),
	}})
	v0 := s.legacyBody(v.PlatformID, "upvote", v.Weight >= 2, query)
	s.sendAll("vote.create", v1, v0)
}

// The user of webhook.test: the project owner.
const (
	testUserID         = "900000000000000001"
	testUserPlatformID = "160105994217586689"
)

// SendWebhookTest sends a webhook.test to every receiver in the background,
// as Top.gg's "send test" button does.
func (s *Server) SendWebhookTest() {
	v1 := mustJSON(webhookEnvelope{Type: "webhook.test", Data: struct {
		User    webhook.User    `json:"user"`
		Project webhook.Project `json:"project"`
	}{voter(testUserID, testUserPlatformID), s.webhookProject()}})
	s.sendAll("webhook.test", v1, s.legacyBody(testUserPlatformID, "test", false, ""))
}

// SendWebhookEvent sends {"type": eventType, "data": data} to every v1 receiver,
// for events the fake does not make; it fails, sending nothing, if data is not JSON.
func (s *Server) SendWebhookEvent(eventType string, data any) error {
	body, err := json.Marshal(webhookEnvelope{Type: eventType, Data: data})
	if err != nil {
		return err
	}
	s.sendAll(eventType, body, nil)
	return nil
}
