package topgg

import (
	"context"
	"encoding/json"
)

// Project is the project that owns the token (GET /v1/projects/@me): its
// Platform ("discord", "roblox") and Type ("bot", "server", "game") as sent.
type Project struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Platform    string   `json:"platform"`
	Type        string   `json:"type"`
	Headline    string   `json:"headline"`
	Tags        []string `json:"tags"`
	Votes       int      `json:"votes"`
	VotesTotal  int      `json:"votes_total"`
	ReviewScore float64  `json:"review_score"`
	ReviewCount int      `json:"review_count"`
}

// IsDiscordBot reports whether the project is a Discord bot, the only kind
// with server/shard metrics and slash commands.
func (p *Project) IsDiscordBot() bool {
	return projectKind{p.Platform, p.Type} == discordBot
}

// projectKind is a project's platform and type; the zero value is unknown.
type projectKind struct{ platform, typ string }

var (
	discordBot    = projectKind{"discord", "bot"}
	discordServer = projectKind{"discord", "server"}
	robloxGame    = projectKind{"roblox", "game"}
)

// Project returns the token's project. The client remembers its kind, so that
// later metrics of the wrong kind fail validation without a request.
func (c *Client) Project(ctx context.Context) (*Project, error) {
	p, err := get[Project](ctx, c, &call{route: routeProject, idempotent: true, family: "v1:project", tokenOnly400: true})
	if err != nil {
		return nil, err
	}
	c.kind.Store(&projectKind{p.Platform, p.Type})
	return p, nil
}

func (c *Client) knownKind() projectKind {
	if k := c.kind.Load(); k != nil {
		return *k
	}
	return projectKind{}
}

// ProjectUpdate changes the listing's headline (3 to 140 characters) and
// Markdown page content (300 to 50,000), per locale ("en", "de", ...); at
// least one of the two maps must have an entry.
type ProjectUpdate struct {
	Headline    map[string]string `json:"headline,omitempty"`
	PageContent map[string]string `json:"page_content,omitempty"`
}

// UpdateProject sets the headline and/or page content. The website may take
// up to an hour to show the change.
func (c *Client) UpdateProject(ctx context.Context, u ProjectUpdate) error {
	if err := u.validate(); err != nil {
		return err
	}
	_, err := c.do(ctx, &call{route: routeUpdateProject, body: u, idempotent: true, family: "v1:project", tokenOnly400: true}, nil)
	return err
}

// SetCommands overwrites the listing's slash commands with defs (encoded
// Discord application commands); nil clears them. Discord bots only.
func (c *Client) SetCommands(ctx context.Context, defs []json.RawMessage) error {
	if err := c.checkCommands(defs); err != nil {
		return err
	}
	if defs == nil {
		defs = []json.RawMessage{}
	}
	_, err := c.do(ctx, &call{route: routeCommands, body: defs, idempotent: true, family: "v1:commands"}, nil)
	return err
}
