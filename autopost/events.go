package autopost

import (
	"encoding/json"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/discord"
)

// onEvent is the shard's discordgo handler; only the raw event carries the
// sequence number that orders the events.
func (sh *shard) onEvent(s *discordgo.Session, e *discordgo.Event) {
	switch e.Type {
	case "GUILD_CREATE":
		if gc, ok := e.Struct.(*discordgo.GuildCreate); ok {
			sh.onGuild(s, e.Sequence, gc.Guild, stateAvailable)
		}
	case "GUILD_DELETE":
		if gd, ok := e.Struct.(*discordgo.GuildDelete); ok {
			sh.onGuild(s, e.Sequence, gd.Guild, stateRemoved)
		}
	case "READY":
		if r, ok := readReady(e); ok {
			sh.applyReady(r)
		}
	}
}

// onGuild applies a GUILD_CREATE (state available) or GUILD_DELETE (state
// removed); either one marked unavailable is an outage, which keeps counting.
func (sh *shard) onGuild(s *discordgo.Session, seq int64, g *discordgo.Guild, state uint64) {
	if g == nil {
		return
	}
	id, unavailable, session := guildFields(s, g)
	gid, ok := discord.ParseID(id)
	if !ok {
		return
	}
	if unavailable {
		state = stateUnavailable
	}
	sh.guildEvent(session, seq, gid, state)
}

// guildFields reads the guild's id and availability, under the State's lock
// as State overwrites the guild in place, and the session the event came on:
// the State's READY session, unless a whole reconnect happened since.
func guildFields(s *discordgo.Session, g *discordgo.Guild) (id string, unavailable bool, session string) {
	if s == nil || s.State == nil {
		return g.ID, g.Unavailable, ""
	}
	st := s.State
	st.RLock()
	id, unavailable, session = g.ID, g.Unavailable, st.Ready.SessionID
	st.RUnlock()
	return id, unavailable, session
}

// readReady copies what the tracker needs out of READY's raw payload: the
// decoded *discordgo.Ready shares its guilds with State, which modifies them.
func readReady(e *discordgo.Event) (readyInfo, bool) {
	var w struct {
		SessionID string              `json:"session_id"`
		User      struct{ ID string } `json:"user"`
		Shard     *[2]int             `json:"shard"`
		Guilds    []struct {
			ID          string `json:"id"`
			Unavailable bool   `json:"unavailable"`
		} `json:"guilds"`
	}
	if len(e.RawData) == 0 || json.Unmarshal(e.RawData, &w) != nil {
		return readyInfo{}, false
	}
	info := readyInfo{session: w.SessionID, seq: e.Sequence, botID: w.User.ID, shard: w.Shard, guilds: make([]readyGuild, 0, len(w.Guilds))}
	for _, g := range w.Guilds {
		if id, ok := discord.ParseID(g.ID); ok {
			info.guilds = append(info.guilds, readyGuild{id: id, unavailable: g.Unavailable})
		}
	}
	return info, true
}
