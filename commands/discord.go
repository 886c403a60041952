package commands

import "github.com/bwmarrin/discordgo"

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
