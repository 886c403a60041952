package discordtest

import (
	"net/http"
	"slices"

	"github.com/dblkit/go-topgg/internal/discord"
)

// memberRole is a role a member of a guild has.
type memberRole struct{ guild, user, role string }

// RoleChange is one role request the Server accepted, PUT (Added) or
// DELETE /guilds/{guild}/members/{user}/roles/{role}, even one that changes
// nothing.
type RoleChange struct {
	GuildID, UserID, RoleID string
	Added                   bool
	Reason                  string // the X-Audit-Log-Reason header
}

// changeRole answers PUT and DELETE with 204 for a guild the bot is in (any
// user and role: the fake models neither), 404 Unknown Guild otherwise.
func (s *Server) changeRole(w http.ResponseWriter, r *http.Request) {
	key := memberRole{r.PathValue("guild"), r.PathValue("user"), r.PathValue("role")}
	for _, id := range []string{key.guild, key.user, key.role} {
		if _, err := parseSnowflake(id); err != nil {
			writeStatus(w, http.StatusNotFound)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.guilds[key.guild]; !ok {
		writeError(w, http.StatusNotFound, 10004, "Unknown Guild")
		return
	}
	add := r.Method == http.MethodPut
	if add {
		s.roles[key] = struct{}{}
	} else {
		delete(s.roles, key)
	}
	s.roleChanges = append(s.roleChanges, RoleChange{
		GuildID: key.guild, UserID: key.user, RoleID: key.role, Added: add,
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
	roles := []string{}
	for k := range s.roles {
		if k.guild == guildID && k.user == userID {
			roles = append(roles, k.role)
		}
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
