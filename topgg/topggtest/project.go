package topggtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"

	"github.com/dblkit/go-topgg/topgg"
)

// Project is the project that owns the server's token: what GET
// /v1/projects/@me returns, and PlatformID, its id on its platform (for a bot
// also its v0 bot id), which that endpoint does not serve.
type Project struct {
	topgg.Project
	PlatformID string `json:"platform_id"`
}

// DiscordBot returns a realistic Discord bot project, the default of
// [NewServer]; its bot is listed in the v0 directory.
func DiscordBot() Project {
	return Project{Project: topgg.Project{
		ID: "803190510032756736", Name: "Example Bot", Platform: "discord", Type: "bot",
		Headline: "A friendly example bot that keeps your server tidy.", Tags: []string{"moderation", "utility"},
		Votes: 42, VotesTotal: 1337, ReviewScore: 4.5, ReviewCount: 12,
	}, PlatformID: "264811613708746752"}
}

// DiscordServer returns a realistic Discord server (guild) project.
func DiscordServer() Project {
	return Project{Project: topgg.Project{
		ID: "1084541204582825984", Name: "Example Community", Platform: "discord", Type: "server",
		Headline: "A welcoming community for people who like examples.", Tags: []string{"community", "gaming"},
		Votes: 17, VotesTotal: 512, ReviewScore: 4.8, ReviewCount: 5,
	}, PlatformID: "1084539287597551686"}
}

// RobloxGame returns a realistic Roblox game project.
func RobloxGame() Project {
	return Project{Project: topgg.Project{
		ID: "1191201011204009984", Name: "Example Obby", Platform: "roblox", Type: "game",
		Headline: "Jump, climb and race through a hundred example stages.", Tags: []string{"obby", "adventure"},
		Votes: 7, VotesTotal: 99, ReviewScore: 3.9, ReviewCount: 3,
	}, PlatformID: "6516141723"}
}

func (p Project) clone() Project {
	p.Tags = slices.Clone(p.Tags)
	return p
}

func (p Project) wire() topgg.Project {
	p.Tags = append([]string{}, p.Tags...)
	return p.Project
}

// ProjectToken returns the token the fake issues by default for a project
// id, shaped like a real one; two servers of one project share it.
func ProjectToken(projectID string) string {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	payloadJSON, _ := json.Marshal(map[string]string{"_t": "", "id": projectID})
	// The standard padded alphabet on purpose: a client that only decodes
	// base64url should fail here rather than in production.
	payload := base64.StdEncoding.EncodeToString(payloadJSON)
	mac := hmac.New(sha256.New, []byte("topggtest-signing-key"))
	mac.Write([]byte(header + "." + payload))
	sig := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	return header + "." + payload + "." + sig
}
