package topgg

import (
	"context"
	"encoding/json"
	"net/http"
)

// Platform is the platform a project lives on; unknown values decode as they are.
type Platform string

// Platforms the service documents.
const (
	PlatformDiscord Platform = "discord"
	PlatformRoblox  Platform = "roblox"
)

// ProjectType is the kind of project on its platform; unknown values decode as they are.
type ProjectType string

// Project types the service documents.
const (
	ProjectTypeBot    ProjectType = "bot"
	ProjectTypeServer ProjectType = "server"
	ProjectTypeGame   ProjectType = "game"
)

// Project is the project that owns the token (GET /v1/projects/@me).
type Project struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Platform    Platform    `json:"platform"`
	Type        ProjectType `json:"type"`
	Headline    string      `json:"headline"`
	Tags        []string    `json:"tags"`
	Votes       int         `json:"votes"`
	VotesTotal  int         `json:"votes_total"`
	ReviewScore float64     `json:"review_score"`
	ReviewCount int         `json:"review_count"`
}

// IsDiscordBot reports whether the project is a Discord bot, the only kind
// with server/shard metrics and slash commands.
func (p *Project) IsDiscordBot() bool {
	return p.Platform == PlatformDiscord && p.Type == ProjectTypeBot
}

type projectKind struct {
	platform Platform
	typ      ProjectType
}

// Project returns the token's project. The client remembers its kind, so that
// later metrics of the wrong kind fail validation without a request.
func (c *Client) Project(ctx context.Context) (*Project, error) {
	p, err := get[Project](ctx, c, &call{method: http.MethodGet, path: me, idempotent: true, family: "v1:project", route: RouteProject, tokenOnly400: true})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.kind = projectKind{p.Platform, p.Type}
	c.mu.Unlock()
	return p, nil
}

func (c *Client) knownKind() projectKind {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kind
}

// ProjectUpdate changes the listing's headline (3 to 140 characters) and
// Markdown page content (300 to 50,000), per locale; at least one of the two
// maps must have an entry.
type ProjectUpdate struct {
	Headline    map[Locale]string `json:"headline,omitempty"`
	PageContent map[Locale]string `json:"page_content,omitempty"`
}

// UpdateProject sets the headline and/or page content. The website may take
// up to an hour to show the change.
func (c *Client) UpdateProject(ctx context.Context, u ProjectUpdate) error {
	if err := u.validate(); err != nil {
		return err
	}
	_, err := c.do(ctx, &call{method: http.MethodPatch, path: me, body: u, idempotent: true, family: "v1:project", route: RouteProject, tokenOnly400: true}, nil)
	return err
}

// SetCommands overwrites the listing's slash commands with defs, each an
// encoded Discord application-command object; an empty or nil slice clears
// them. After [Client.Project], a project not a Discord bot fails validation.
func (c *Client) SetCommands(ctx context.Context, defs []json.RawMessage) error {
	if err := c.checkCommands(defs); err != nil {
		return err
	}
	if defs == nil {
		defs = []json.RawMessage{}
	}
	_, err := c.do(ctx, &call{method: http.MethodPut, path: me + "/commands", body: defs, idempotent: true, family: "v1:commands", route: RouteCommands}, nil)
	return err
}

// Locale is a language code for headlines and page content ([Locale.Valid]).
type Locale string

// Valid reports whether l is one of the supported locales.
func (l Locale) Valid() bool {
	switch l {
	case "en", "de", "fr", "pt", "tr", "hi", "ja", "ar", "nl", "ko", "it", "es", "ru", "uk", "vi", "zh":
		return true
	}
	return false
}
