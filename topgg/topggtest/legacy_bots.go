package topggtest

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/topgg"
)

// v0 directory paging, spec 4.2.
const (
	botsDefaultLimit = 50
	botsMaxLimit     = 500
)

// Bot is a v0 directory entry: the client's type. The fake serves empty
// nullable fields (zero counts included) as null and nil slices as [].
type Bot = topgg.Bot

// Bot fields served as null when empty, and as [] when nil (spec 2.8).
var (
	botNullable = []string{"avatar", "defAvatar", "longdesc", "website", "support", "github", "invite",
		"server_count", "shard_count", "vanity"}
	botLists = []string{"tags", "owners", "guilds", "shards"}
)

// wireBot is the bot as served, field by field; its date is in UTC.
func wireBot(b Bot) map[string]json.RawMessage {
	b.Date = b.Date.UTC()
	raw, _ := json.Marshal(b)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	for _, f := range botNullable {
		if v := string(m[f]); v == `""` || v == "0" {
			m[f] = json.RawMessage("null")
		}
	}
	for _, f := range botLists {
		if v := string(m[f]); v == "" || v == "null" {
			m[f] = json.RawMessage("[]")
		}
	}
	return m
}

// projectBot keeps only the wire fields the fields query names, if it names any.
func projectBot(b Bot, fields string) map[string]json.RawMessage {
	all := wireBot(b)
	out := map[string]json.RawMessage{}
	named := false
	for f := range strings.SplitSeq(fields, ",") {
		if f = strings.TrimSpace(f); f != "" {
			named = true
			if v, ok := all[f]; ok {
				out[f] = v
			}
		}
	}
	if !named {
		return all
	}
	return out
}

func cloneBot(b Bot) Bot {
	b.Tags = slices.Clone(b.Tags)
	b.Owners = slices.Clone(b.Owners)
	b.Guilds = slices.Clone(b.Guilds)
	b.Shards = slices.Clone(b.Shards)
	return b
}

// ownBot is the directory entry of a Discord bot project.
func ownBot(p Project, now time.Time) Bot {
	return Bot{
		ID: p.PlatformID, ClientID: p.PlatformID, Username: p.Name, Tags: slices.Clone(p.Tags),
		Owners: []string{"160105994217586689"}, Date: now.Round(0), MonthlyPoints: p.Votes,
		Discriminator: "0", DefAvatar: "6debd47ed13483642cf09e832ed0bc1b", Lib: "discordgo", Prefix: "/",
		ShortDesc: p.Headline, Points: p.VotesTotal,
	}
}

// AddBot lists a bot in the v0 directory, replacing one with the same ID;
// ClientID defaults to ID and Date to the server clock. It fails on an empty ID.
func (s *Server) AddBot(b Bot) error {
	if b.ID == "" {
		return errors.New("topggtest: AddBot needs an ID")
	}
	b = cloneBot(b)
	b.ClientID = cmp.Or(b.ClientID, b.ID)
	if b.Date.IsZero() {
		b.Date = s.now()
	}
	b.Date = b.Date.Round(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.botIndexLocked(b.ID); i >= 0 {
		s.bots[i] = b
	} else {
		s.bots = append(s.bots, b)
	}
	return nil
}

// directory returns the v0 directory in listing order.
func (s *Server) directory() []Bot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Bot, len(s.bots))
	for i, b := range s.bots {
		out[i] = cloneBot(b)
	}
	return out
}

// botIndexLocked returns the index of the bot with the id, or -1. Callers hold s.mu.
func (s *Server) botIndexLocked(id string) int {
	return slices.IndexFunc(s.bots, func(x Bot) bool { return x.ID == id })
}

// botOr404 returns a copy of the bot of the request's :id, or answers 404.
func (s *Server) botOr404(c *call) (b Bot, ok bool) {
	s.mu.Lock()
	if i := s.botIndexLocked(c.param); i >= 0 {
		b, ok = cloneBot(s.bots[i]), true
	}
	s.mu.Unlock()
	if !ok {
		writeLegacyError(c.w, http.StatusNotFound, "Not found")
	}
	return b, ok
}

// ownBotOnly answers 404 for an unknown bot and 403 for a bot the token
// does not own, and reports whether the request may go on.
func (s *Server) ownBotOnly(c *call) bool {
	if _, ok := s.botOr404(c); !ok {
		return false
	}
	if !s.cfg.project.IsDiscordBot() || c.param != s.cfg.project.PlatformID {
		writeLegacyError(c.w, http.StatusForbidden, "Forbidden: the token does not own this bot")
		return false
	}
	return true
}

var botSorts = map[string]func(a, b Bot) int{
	"id":            func(a, b Bot) int { return discord.CompareIDs(a.ID, b.ID) },
	"date":          func(a, b Bot) int { return a.Date.Compare(b.Date) },
	"monthlyPoints": func(a, b Bot) int { return cmp.Compare(a.MonthlyPoints, b.MonthlyPoints) },
}

// searchBots serves GET /bots.
func (s *Server) searchBots(c *call) {
	q := c.r.URL.Query()
	limit, limitErr := queryInt(q.Get("limit"), botsDefaultLimit)
	offset, offsetErr := queryInt(q.Get("offset"), 0)
	sortBy, desc := strings.CutPrefix(q.Get("sort"), "-")
	order, sorted := botSorts[sortBy]
	msg := ""
	switch {
	case limitErr != nil || limit < 0:
		msg = "limit must be a non-negative integer"
	case limit > botsMaxLimit:
		msg = "limit must not exceed 500"
	case offsetErr != nil || offset < 0:
		msg = "offset must be a non-negative integer"
	case q.Get("sort") != "" && !sorted:
		msg = "sort must be one of id, date, monthlyPoints (optionally prefixed with -)"
	}
	if msg != "" {
		writeLegacyError(c.w, http.StatusBadRequest, msg)
		return
	}

	bots := s.directory()
	if sorted {
		slices.SortStableFunc(bots, func(a, b Bot) int {
			if desc {
				a, b = b, a
			}
			return order(a, b)
		})
	}
	start := min(offset, len(bots))
	results := []map[string]json.RawMessage{}
	for _, b := range bots[start:min(start+limit, len(bots))] {
		results = append(results, projectBot(b, q.Get("fields")))
	}
	writeJSON(c.w, http.StatusOK, map[string]any{
		"results": results, "limit": limit, "offset": offset, "count": len(results), "total": len(bots),
	})
}

func queryInt(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	return strconv.Atoi(v)
}

// getBot serves GET /bots/:id.
func (s *Server) getBot(c *call) {
	if b, ok := s.botOr404(c); ok {
		writeJSON(c.w, http.StatusOK, projectBot(b, c.r.URL.Query().Get("fields")))
	}
}
