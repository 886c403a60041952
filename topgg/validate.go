package topgg

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/internal/typednil"
)

// The service's limits that the client checks before sending; lengths are
// where they are checked.
const (
	maxBotsLimit   = 500             // the largest page of GET /bots
	maxBatchFuture = 5 * time.Minute // how far ahead a batch timestamp may be
)

func invalid(field, problem, rule string) *ValidationError {
	return &ValidationError{Field: field, Problem: problem, Rule: rule}
}

// checkLen counts characters (runes), as the service does, not bytes.
func checkLen(field, s string, lo, hi int) error {
	n := utf8.RuneCountInString(s)
	if n < lo || n > hi {
		return invalid(field, fmt.Sprintf("has %d characters", n), fmt.Sprintf("%d to %d characters", lo, hi))
	}
	return nil
}

func checkSnowflake(field, id string) error {
	if _, ok := discord.ParseID(id); !ok {
		problem := fmt.Sprintf("%q is not a number", id)
		if id == "" {
			problem = "is empty"
		}
		return invalid(field, problem, "a numeric id")
	}
	return nil
}

func checkCount(field string, n int) error {
	if n < 0 {
		return invalid(field, fmt.Sprintf("is %d", n), ">= 0")
	}
	return nil
}

// checkSome checks a payload of two optional counts, f.a and f.b: at least one
// set, none negative.
func checkSome(f, a string, x *int, b string, y *int) error {
	switch {
	case x == nil && y == nil:
		return invalid(f, "has no field", "at least one of "+a+" and "+b)
	case x != nil && *x < 0:
		return checkCount(f+"."+a, *x)
	case y != nil && *y < 0:
		return checkCount(f+"."+b, *y)
	}
	return nil
}

// validate checks the update: at least one member, known locales, lengths in characters.
func (u ProjectUpdate) validate() error {
	if len(u.Headline) == 0 && len(u.PageContent) == 0 {
		return invalid("headline/page_content", "both are empty", "at least one of headline and page_content")
	}
	for _, m := range []struct {
		name   string
		values map[string]string
		lo, hi int
	}{{"headline", u.Headline, 3, 140}, {"page_content", u.PageContent, 300, 50000}} {
		for _, loc := range slices.Sorted(maps.Keys(m.values)) {
			field := fmt.Sprintf("%s[%s]", m.name, loc)
			if !slices.Contains([]string{"en", "de", "fr", "pt", "tr", "hi", "ja", "ar", "nl", "ko", "it", "es", "ru", "uk", "vi", "zh"}, loc) {
				return invalid(field, fmt.Sprintf("locale %q is not supported", loc), "one of the 16 supported locales")
			}
			if err := checkLen(field, m.values[loc], m.lo, m.hi); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a NewAnnouncement) validate() error {
	var cat error
	if !slices.Contains([]string{"", "announcement", "event", "new_feature"}, a.Category) {
		cat = invalid("category", fmt.Sprintf("%q is unknown", a.Category), "announcement, event or new_feature")
	}
	return cmp.Or(checkLen("title", a.Title, 3, 100), checkLen("content", a.Content, 10, 2000), cat)
}

func (m BotMetrics) validate(f string) error {
	return checkSome(f, "server_count", m.ServerCount, "shard_count", m.ShardCount)
}

func (m ServerMetrics) validate(f string) error {
	if err := checkSome(f, "member_count", m.MemberCount, "online_count", m.OnlineCount); err != nil {
		return err
	}
	if m.MemberCount != nil && m.OnlineCount != nil && *m.OnlineCount > *m.MemberCount {
		return invalid(f+".online_count", fmt.Sprintf("%d exceeds member_count %d", *m.OnlineCount, *m.MemberCount), "online_count <= member_count")
	}
	return nil
}

func (m GameMetrics) validate(f string) error {
	if m.PlayerCount < 0 {
		return checkCount(f+".player_count", m.PlayerCount)
	}
	return nil
}

func (c *Client) checkMetrics(field string, m Metrics) error {
	if typednil.Is(m) {
		return invalid(field, "is nil", "a BotMetrics, ServerMetrics or GameMetrics payload")
	}
	if err := m.validate(field); err != nil {
		return err
	}
	if known := c.knownKind(); known.platform != "" && known != m.kind() {
		return invalid(field, fmt.Sprintf("is for a %s %s", m.kind().platform, m.kind().typ),
			fmt.Sprintf("the payload of the project's kind (%s %s)", known.platform, known.typ))
	}
	return nil
}

func (c *Client) checkBatch(samples []MetricsSample, now time.Time) error {
	if len(samples) < 1 || len(samples) > MaxBatch {
		return invalid("data", fmt.Sprintf("has %d entries", len(samples)), fmt.Sprintf("1 to %d entries", MaxBatch))
	}
	for i, s := range samples {
		field := fmt.Sprintf("data[%d]", i)
		if err := c.checkMetrics(field+".metrics", s.Metrics); err != nil {
			return err
		}
		if i > 0 && s.Metrics.kind() != samples[0].Metrics.kind() {
			return invalid(field+".metrics", "differs in kind from data[0]", "one project kind per batch")
		}
		if s.Timestamp.After(now.Add(maxBatchFuture)) {
			return invalid(field+".timestamp", fmt.Sprintf("%s is in the future", s.Timestamp.UTC().Format(time.RFC3339)), "at most 5 minutes in the future")
		}
	}
	return nil
}

func (c *Client) checkCommands(defs []json.RawMessage) error {
	if known := c.knownKind(); known.platform != "" && known != discordBot {
		return invalid("commands", fmt.Sprintf("project is a %s %s", known.platform, known.typ), "only a Discord bot project has commands")
	}
	for i, raw := range defs {
		field := fmt.Sprintf("commands[%d]", i)
		var cmd struct {
			Name        *string `json:"name"`
			Description *string `json:"description"`
			Type        int     `json:"type"`
		}
		if err := json.Unmarshal(raw, &cmd); err != nil {
			return invalid(field, "is not a JSON command object", "an application-command object")
		}
		if cmd.Name == nil || *cmd.Name == "" {
			return invalid(field+".name", "is missing", "a non-empty name")
		}
		if (cmd.Type == 0 || cmd.Type == 1) && (cmd.Description == nil || *cmd.Description == "") {
			return invalid(field+".description", "is missing", "a description for a slash command")
		}
	}
	return nil
}

func (q VotesQuery) validate(now time.Time) error {
	if q.Cursor != "" {
		return nil
	}
	if q.StartDate.IsZero() {
		return invalid("startDate", "is missing without a cursor", "cursor or startDate")
	}
	if q.StartDate.Before(now.AddDate(-1, 0, 0)) {
		return invalid("startDate", fmt.Sprintf("%s is more than one year back", q.StartDate.UTC().Format(time.RFC3339)), "at most one year in the past")
	}
	return nil
}

func (s UserIDKind) validate() error {
	switch s {
	case "", UserIDTopgg, UserIDDiscord:
		return nil
	}
	return invalid("source", fmt.Sprintf("%q is unknown", string(s)), "topgg or discord")
}

// checkBotFields checks names for the fields parameter: Bot's JSON names.
func checkBotFields(fields []string) error {
	isField := func(f string) bool {
		return slices.ContainsFunc(reflect.VisibleFields(reflect.TypeFor[Bot]()), func(sf reflect.StructField) bool {
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			return name == f
		})
	}
	for i, f := range fields {
		if !isField(f) {
			return invalid(fmt.Sprintf("fields[%d]", i), fmt.Sprintf("%q is not a bot field", f), "names of v0 Bot fields")
		}
	}
	return nil
}

func (q BotQuery) validate() error {
	if q.Limit < 0 || q.Limit > maxBotsLimit {
		return invalid("limit", fmt.Sprintf("is %d", q.Limit), fmt.Sprintf("0 (default 50) to %d", maxBotsLimit))
	}
	var sort error
	if f := strings.TrimPrefix(q.Sort, "-"); q.Sort != "" && f != "id" && f != "date" && f != "monthlyPoints" {
		sort = invalid("sort", fmt.Sprintf("%q is not sortable", q.Sort), "id, date or monthlyPoints, optionally prefixed with -")
	}
	return cmp.Or(checkCount("offset", q.Offset), sort, checkBotFields(q.Fields))
}

func (s BotStats) validate() error {
	var shard, id error
	if i := slices.IndexFunc(s.Shards, func(n int) bool { return n < 0 }); i >= 0 {
		shard = checkCount(fmt.Sprintf("shards[%d]", i), s.Shards[i])
	}
	if s.ShardID != nil && (*s.ShardID < 0 || (s.ShardCount > 0 && *s.ShardID >= s.ShardCount)) {
		id = invalid("shard_id", fmt.Sprintf("is %d", *s.ShardID), "0 <= shard_id < shard_count")
	}
	return cmp.Or(checkCount("server_count", s.ServerCount), shard, checkCount("shard_count", s.ShardCount), id)
}
