package discordtest

import (
	"net/http"
	"slices"

	"github.com/dblkit/go-topgg/internal/discord"
)

// memberKey names a member of a guild.
type memberKey struct{ guild, user string }

// RoleChange is one role request the Server accepted, PUT (Added) or
// DELETE /guilds/{guild}/members/{user}/roles/{role}, even one that changes
// nothing.
type RoleChange struct {
	GuildID, UserID, RoleID string
	Added                   bool
	Reason                  string // the X-Audit-Log-Reason header
}

func (s *Server) addRole(w http.ResponseWriter, r *http.Request)    { s.changeRole(w, r, true) }
func (s *Server) removeRole(w http.ResponseWriter, r *http.Request) { s.changeRole(w, r, false) }

// changeRole answers 204 for a guild the bot is in (any user and role: the
// fake models neither), 404 Unknown Guild otherwise.
func (s *Server) changeRole(w http.ResponseWriter, r *http.Request, add bool) {
	guild, user, role := r.PathValue("guild"), r.PathValue("user"), r.PathValue("role")
	for _, id := range []string{guild, user, role} {
		if _, err := parseSnowflake(id); err != nil {
			writeStatus(w, http.StatusNotFound)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.guilds[guild]; !ok {
		writeError(w, http.StatusNotFound, 10004, "Unknown Guild")
		return
	}
	key := memberKey{guild, user}
	if add {
		if s.roles[key] == nil {
			s.roles[key] = make(map[string]struct{})
		}
		s.roles[key][role] = struct{}{}
	} else {
		delete(s.roles[key], role)
		if len(s.roles[key]) == 0 {
			delete(s.roles, key)
		}
	}
	s.roleChanges = append(s.roleChanges, RoleChange{
		GuildID: guild, UserID: user, RoleID: role, Added: add,
		Reason: r.Header.Get("X-Audit-Log-Reason"),
	})
	s.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

// MemberRoles returns the roles a member has been given through the REST
// API (and not taken back), ordered by ID.
func (s *Server) MemberRoles(guildID, userID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memberRolesLocked(guildID, userID)
}

func (s *Server) memberRolesLocked(guildID, userID string) []string {
	roles := make([]string, 0, len(s.roles[memberKey{guildID, userID}]))
	for id := range s.roles[memberKey{guildID, userID}] {
		roles = append(roles, id)
	}
	slices.SortFunc(roles, discord.CompareIDs)
	return roles
}

// RoleChanges returns every accepted role request, in arrival order.
func (s *Server) RoleChanges() []RoleChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.roleChanges)
}
