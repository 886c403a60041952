package commands

import (
	"errors"

	"github.com/bwmarrin/discordgo"
)

// errNotReady: a session without READY, so no application ID.
var errNotReady = errors.New("commands: discordgo session is not ready (no READY received)")

// errDiscordFetch marks a failure to read the commands from Discord.
var errDiscordFetch = errors.New("commands: fetching the application's commands from Discord")

// applicationID reads the application ID from the session's State, or "".
func applicationID(session *discordgo.Session) string {
	if session.State == nil {
		return ""
	}
	st := session.State
	st.RLock()
	defer st.RUnlock()
	if st.Application != nil && st.Application.ID != "" {
		return st.Application.ID
	}
	if st.User != nil {
		return st.User.ID
	}
	return ""
}
