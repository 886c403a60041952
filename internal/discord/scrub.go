// This file: keeps a session's bot token out of the errors a Discord call
// returns, which quote the body Discord (or a proxy before it) answered.

package discord

import (
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// Scrub returns err, or, when the answer quoted s's token, err without it: a
// *discordgo.RESTError stays one (same status and code, no request), any other
// error keeps its text only.
func Scrub(s *discordgo.Session, err error) error {
	if err == nil || s == nil || s.Token == "" {
		return err
	}
	scrub := httpx.NewScrubber(strings.TrimPrefix(s.Token, "Bot "))
	re, ok := err.(*discordgo.RESTError) // discordgo returns it unwrapped
	if !ok || scrub.Text(err.Error()) == err.Error() {
		return scrub.Err(err)
	}
	c := discordgo.RESTError{ResponseBody: scrub(re.ResponseBody, false)}
	if re.Response != nil {
		resp := *re.Response
		resp.Request, resp.Body = nil, nil // the request holds the token
		c.Response = &resp
	}
	if re.Message != nil {
		m := *re.Message
		m.Message = scrub.Text(m.Message)
		c.Message = &m
	}
	return &c
}
