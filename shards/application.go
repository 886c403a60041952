package shards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/discord"
)

// Application reads the bot's application through the first session, under
// ctx; an application without an ID is an error. No error quotes the token.
func (g *Group) Application(ctx context.Context) (*discordgo.Application, error) {
	s := g.sessions[0]
	body, err := s.RequestWithBucketID(http.MethodGet, discordgo.EndpointOAuth2Application("@me"), nil,
		discordgo.EndpointOAuth2Application(""), discordgo.WithContext(ctx))
	var app discordgo.Application
	if err == nil {
		if err = json.Unmarshal(body, &app); err == nil && app.ID == "" {
			err = errors.New("the application Discord sent has no id")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("shards: reading the Discord application: %w", discord.Scrub(s, err))
	}
	return &app, nil
}
