package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/dblkit/go-topgg/topgg"
)

// Project is the project a v1 event is about: its Top.gg id, type and
// platform as sent, and its id on the platform.
type Project struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Platform   string `json:"platform"`
	PlatformID string `json:"platform_id"`
}

// User is the Top.gg user a v1 event is about: the Top.gg user id, the id on
// the project's platform (the Discord user id), name and avatar.
type User struct {
	ID         string `json:"id"`
	PlatformID string `json:"platform_id"`
	Name       string `json:"name"`
	AvatarURL  string `json:"avatar_url"`
}

// Vote is one vote of a v1 (vote.create) or v0 delivery, as [Config.OnVote]
// receives it: the history's record (UserID, CreatedAt and ExpiresAt v1 only;
// Weight 1 if absent, in v0 2 if isWeekend) and what a delivery adds.
type Vote struct {
	topgg.Vote
	// Version is 1 for a v1 (signed) delivery, 0 for a legacy one.
	Version int
	// ID (the vote's, which the history lacks), UserName, AvatarURL and
	// ProjectID (the Top.gg project id) are v1 only.
	ID, UserName, AvatarURL, ProjectID string
	// ProjectPlatformID is the project's Discord id (v0: bot or guild).
	ProjectPlatformID string
	// Guild is true for a v0 vote for a server (the body had guild, not bot).
	Guild bool
	// Query holds the vote page's query parameters: the v1 query object, or
	// the parsed v0 query string (first value of each key). Nil when none.
	Query map[string]string
	// Test is true for a v0 test delivery (v1 tests never reach OnVote).
	Test bool
}

// Test is the data of a webhook.test event.
type Test struct {
	User    User
	Project Project
}

// IntegrationCreate is the data of an integration.create event, with the
// [Secret] the integration's deliveries will be signed with.
type IntegrationCreate struct {
	ConnectionID  string
	WebhookSecret Secret
	Project       Project
	User          User
}

// Format prints the event with its secret redacted under every verb, a bad
// one included.
func (e IntegrationCreate) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, "webhook.IntegrationCreate"+strings.TrimPrefix(fmt.Sprintf("%#v", plainIntegrationCreate(e)), "webhook.plainIntegrationCreate"))
		return
	}
	_, _ = fmt.Fprintf(f, "%+v", plainIntegrationCreate(e))
}

// plainIntegrationCreate has IntegrationCreate's fields and none of its
// methods; its WebhookSecret still redacts itself.
type plainIntegrationCreate IntegrationCreate

// IntegrationDelete is the data of an integration.delete event.
type IntegrationDelete struct {
	ConnectionID string
}

// IntegrationAnswer is what [Config.OnIntegrationCreate] answers Top.gg: the
// URL of the integration's deliveries and the event types it wants.
type IntegrationAnswer struct {
	WebhookURL string   `json:"webhook_url"`
	Routes     []string `json:"routes"`
}

// Event is one accepted delivery, as [Config.OnEvent] receives it: one of
// Vote, Test, IntegrationCreate, IntegrationDelete and Data is set.
type Event struct {
	// Type is the delivery's type as sent ("webhook.test", ...); a v0 upvote or
	// test is a "vote.create".
	Type string
	// Version is 1 for a signed delivery, 0 for a legacy one.
	Version int
	// Trace is the x-topgg-trace header, for Top.gg's support.
	Trace string

	Vote              *Vote
	Test              *Test
	IntegrationCreate *IntegrationCreate
	IntegrationDelete *IntegrationDelete
	// Data is the data member (v1) or the whole body (v0) of a type this
	// package does not know, as sent.
	Data json.RawMessage
}
