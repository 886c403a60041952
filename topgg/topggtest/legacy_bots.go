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

// botJSON is the wire form of a Bot: the nullable and never-null fields.
type botJSON struct {
	Bot
	Avatar      *string  `json:"avatar"`
	DefAvatar   *string  `json:"defAvatar"`
	LongDesc    *string  `json:"longdesc"`
	Tags        []string `json:"tags"`
	Website     *string  `json:"website"`
	Support     *string  `json:"support"`
	GitHub      *string  `json:"github"`
	Owners      []string `json:"owners"`
	Guilds      []string `json:"guilds"`
	Invite      *string  `json:"invite"`
	Date        string   `json:"date"`
	ServerCount *int     `json:"server_count"`
	ShardCount  *int     `json:"shard_count"`
	Shards      []int    `json:"shards"`
	Vanity      *string  `json:"vanity"`
}

func nullable[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func wireBot(b Bot) botJSON {
	return botJSON{
		Bot: b, Avatar: nullable(b.Avatar), DefAvatar: nullable(b.DefAvatar), LongDesc: nullable(b.LongDesc),
		Tags: orEmpty(b.Tags), Website: nullable(b.Website), Support: nullable(b.Support), GitHub: nullable(b.GitHub),
		Owners: orEmpty(b.Owners), Guilds: orEmpty(b.Guilds), Invite: nullable(b.Invite), Date: formatTime(b.Date),
		ServerCount: nullable(b.ServerCount), ShardCount: nullable(b.ShardCount), Shards: orEmpty(b.Shards),
		Vanity: nullable(b.Vanity),
	}
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
	if b.ClientID == "" {
		b.ClientID = b.ID
	}
	if b.Date.IsZero() {
		b.Date = s.now()
	}
	b.Date = b.Date.Round(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.bots, func(x Bot) bool { return x.ID == b.ID }); i >= 0 {
		s.bots[i] = b
		return nil
	}
	s.bots = append(s.bots, b)
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

// botOr404 returns a copy of the bot of the request's :id, or answers 404.
func (s *Server) botOr404(c *call) (Bot, bool) {
	s.mu.Lock()
	b, ok := s.findBotLocked(c.param)
	s.mu.Unlock()
	if !ok {
		writeLegacyError(c.w, http.StatusNotFound, "Not found")
	}
	return b, ok
}

// findBotLocked returns a copy of the bot with the id. Callers hold s.mu.
func (s *Server) findBotLocked(id string) (Bot, bool) {
	i := slices.IndexFunc(s.bots, func(x Bot) bool { return x.ID == id })
	if i < 0 {
		return Bot{}, false
	}
	return cloneBot(s.bots[i]), true
}

var botSorts = map[string]func(a, b Bot) int{
	"id":            func(a, b Bot) int { return discord.CompareIDs(a.ID, b.ID) },
	"date":          func(a, b Bot) int { return a.Date.Compare(b.Date) },
	"monthlyPoints": func(a, b Bot) int { return cmp.Compare(a.MonthlyPoints, b.MonthlyPoints) },
}

// projectBot keeps only the requested wire fields of a bot (the fields query).
func projectBot(b Bot, fields []string) any {
	w := wireBot(b)
	if len(fields) == 0 {
		return w
	}
	raw, _ := json.Marshal(w)
	var all map[string]json.RawMessage
	_ = json.Unmarshal(raw, &all)
	out := make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	return out
}

func parseFields(q string) []string {
	var out []string
	for f := range strings.SplitSeq(q, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// searchBots serves GET /bots.
func (s *Server) searchBots(c *call) {
	q := c.r.URL.Query()
	limit, err := queryInt(q.Get("limit"), botsDefaultLimit)
	if err != nil || limit < 0 {
		writeLegacyError(c.w, http.StatusBadRequest, "limit must be a non-negative integer")
		return
	}
	if limit > botsMaxLimit {
		writeLegacyError(c.w, http.StatusBadRequest, "limit must not exceed 500")
		return
	}
	offset, err := queryInt(q.Get("offset"), 0)
	if err != nil || offset < 0 {
		writeLegacyError(c.w, http.StatusBadRequest, "offset must be a non-negative integer")
		return
	}
	var order func(a, b Bot) int
	if sortBy := q.Get("sort"); sortBy != "" {
		desc := strings.HasPrefix(sortBy, "-")
		f, ok := botSorts[strings.TrimPrefix(sortBy, "-")]
		if !ok {
			writeLegacyError(c.w, http.StatusBadRequest, "sort must be one of id, date, monthlyPoints (optionally prefixed with -)")
			return
		}
		order = f
		if desc {
			order = func(a, b Bot) int { return f(b, a) }
		}
	}
	fields := parseFields(q.Get("fields"))

	bots := s.directory()
	if order != nil {
		slices.SortStableFunc(bots, order)
	}
	total := len(bots)
	start := min(offset, total)
	end := min(start+limit, total)
	results := make([]any, 0, end-start)
	for _, b := range bots[start:end] {
		results = append(results, projectBot(b, fields))
	}
	writeJSON(c.w, http.StatusOK, map[string]any{
		"results": results, "limit": limit, "offset": offset, "count": len(results), "total": total,
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
	b, ok := s.botOr404(c)
	if !ok {
		return
	}
	writeJSON(c.w, http.StatusOK, projectBot(b, parseFields(c.r.URL.Query().Get("fields"))))
}

// ownBotOnly answers 404 for an unknown bot and 403 for a bot the token
// does not own, and reports whether the request may go on.
func (s *Server) ownBotOnly(c *call) bool {
	s.mu.Lock()
	_, known := s.findBotLocked(c.param)
	s.mu.Unlock()
	switch {
	case !known:
		writeLegacyError(c.w, http.StatusNotFound, "Not found")
		return false
	case !s.cfg.project.IsDiscordBot() || c.param != s.cfg.project.PlatformID:
		writeLegacyError(c.w, http.StatusForbidden, "Forbidden: the token does not own this bot")
		return false
	}
	return true
}
