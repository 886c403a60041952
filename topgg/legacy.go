package topgg

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Legacy is the v0 interface (/bots), reached with [Client.Legacy]; it waits
// for a slot of the service's call limit rather than fail. Safe for concurrent use.
type Legacy struct{ c *Client }

const legacyFamily = "v0"

// Bot is a bot of the v0 directory. Fields that the service sends as null are zero.
type Bot struct {
	ID               string    `json:"id"`
	ClientID         string    `json:"clientid,omitempty"`
	Username         string    `json:"username"`
	Discriminator    string    `json:"discriminator"`
	Avatar           string    `json:"avatar"`
	DefAvatar        string    `json:"defAvatar"`
	Lib              string    `json:"lib"`
	Prefix           string    `json:"prefix"`
	ShortDesc        string    `json:"shortdesc"`
	LongDesc         string    `json:"longdesc"`
	Tags             []string  `json:"tags"`
	Website          string    `json:"website"`
	Support          string    `json:"support"`
	GitHub           string    `json:"github"`
	Owners           []string  `json:"owners"`
	Guilds           []string  `json:"guilds"`
	Invite           string    `json:"invite"`
	Date             time.Time `json:"date"`
	ServerCount      int       `json:"server_count"`
	ShardCount       int       `json:"shard_count"`
	Shards           []int     `json:"shards,omitempty"`
	CertifiedBot     bool      `json:"certifiedBot"`
	Vanity           string    `json:"vanity"`
	Points           int       `json:"points"`
	MonthlyPoints    int       `json:"monthlyPoints"`
	DonateBotGuildID string    `json:"donatebotguildid"`
}

// BotQuery selects a page of the directory: Limit bots (at most 500; 0: the
// service's 50) after Offset, sorted by "id", "date" or "monthlyPoints" ("-" for
// descending), each with only the v0 Fields named, when any are.
type BotQuery struct {
	Limit, Offset int
	Sort          string
	Fields        []string
}

// BotList is one page of the directory: Count results in it, Total matching.
type BotList struct {
	Results []Bot `json:"results"`
	Limit   int   `json:"limit"`
	Offset  int   `json:"offset"`
	Count   int   `json:"count"`
	Total   int   `json:"total"`
}

// SearchBots returns a page of the bot directory (GET /bots).
func (l *Legacy) SearchBots(ctx context.Context, q BotQuery) (*BotList, error) {
	if err := q.validate(); err != nil {
		return nil, err
	}
	v := url.Values{}
	for k, s := range map[string]string{"limit": strconv.Itoa(q.Limit), "offset": strconv.Itoa(q.Offset), "sort": q.Sort, "fields": strings.Join(q.Fields, ",")} {
		if s != "" && s != "0" { // validated: 0 and "" are the service's defaults
			v.Set(k, s)
		}
	}
	return get[BotList](ctx, l.c, &call{route: routeBots, query: v.Encode(), legacy: true, idempotent: true, family: legacyFamily})
}

// Bot returns one bot, with only the given fields when any are named. An
// unlisted bot is an error matching [ErrNotFound].
func (l *Legacy) Bot(ctx context.Context, botID string, fields ...string) (*Bot, error) {
	var q string
	if len(fields) > 0 {
		q = "fields=" + strings.Join(fields, ",") // validated names: nothing to escape
	}
	return getBot[Bot](ctx, l, routeBot, botID, q, checkBotFields(fields))
}

// Voter is one of a bot's last voters.
type Voter struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Avatar   string `json:"avatar"`
}

// Voters returns the bot's last 1,000 unique voters (GET /bots/:bot_id/votes).
func (l *Legacy) Voters(ctx context.Context, botID string) ([]Voter, error) {
	out, err := getBot[[]Voter](ctx, l, routeBotVoters, botID, "")
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// BotStats are a bot's stats: the total server count (or, posting, the
// shard's, with ShardID), optionally per shard, and the shard count.
type BotStats struct {
	ServerCount int   `json:"server_count"`
	Shards      []int `json:"shards,omitempty"`
	ShardID     *int  `json:"shard_id,omitempty"`
	ShardCount  int   `json:"shard_count,omitempty"`
}

// Stats returns the bot's posted stats, zero when never posted.
func (l *Legacy) Stats(ctx context.Context, botID string) (*BotStats, error) {
	return getBot[BotStats](ctx, l, routeBotStats, botID, "")
}

// PostStats posts the bot's stats; it is retried like an idempotent call.
func (l *Legacy) PostStats(ctx context.Context, botID string, s BotStats) error {
	if err := cmp.Or(checkSnowflake("bot_id", botID), s.validate()); err != nil {
		return err
	}
	_, err := l.c.do(ctx, &call{route: routePostBotStats, id: botID, body: s, legacy: true, idempotent: true, family: legacyFamily}, nil)
	return err
}

// HasVoted reports whether the Discord user voted for the bot in the past 12 hours.
func (l *Legacy) HasVoted(ctx context.Context, botID, userID string) (bool, error) {
	out, err := getBot[voteCheck](ctx, l, routeBotCheck, botID, "userId="+userID, checkSnowflake("userId", userID))
	if err != nil {
		return false, err
	}
	return bool(out.Voted), nil
}

// getBot gets route (GET /bots/:bot_id/...) of botID, after checking botID,
// then the other arguments' errors in order.
func getBot[T any](ctx context.Context, l *Legacy, route route, botID, query string, argErrs ...error) (*T, error) {
	if err := cmp.Or(append([]error{checkSnowflake("bot_id", botID)}, argErrs...)...); err != nil {
		return nil, err
	}
	return get[T](ctx, l.c, &call{route: route, id: botID, query: query, legacy: true, idempotent: true, family: legacyFamily})
}

// voteCheck is the answer of GET /bots/:bot_id/check.
type voteCheck struct {
	Voted flag `json:"voted"`
}

// flag decodes the v0 0/1 flag, and also true/false and null.
type flag bool

func (f *flag) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if !slices.Contains([]string{"0", "1", "false", "true", "null"}, s) {
		return fmt.Errorf("voted: want 0 or 1, got %.20s", b)
	}
	*f = s == "1" || s == "true"
	return nil
}
