package topgg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// boundary is one call at a rule's boundary: field is the *ValidationError's
// field when the call must be refused, "" when it must reach the service and pass.
type boundary struct {
	name  string
	field string
	call  func(context.Context, *topgg.Client) error
}

// runBoundaries runs each case on its own server and asserts that a refused call
// sends nothing and an accepted one is sent once and accepted by the fake, which
// enforces the same rule: so the two agree on where the boundary lies.
func runBoundaries(t *testing.T, cases []boundary, opts ...topggtest.Option) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, opts...)
			c := newClient(t, srv)
			err := tc.call(t.Context(), c)
			if tc.field == "" {
				require.NoError(t, err)
				require.Len(t, srv.Requests(), 1)
				return
			}
			requireInvalid(t, err, tc.field)
			require.Empty(t, srv.Requests(), "a refused call must send nothing")
		})
	}
}

func headline(s string) func(context.Context, *topgg.Client) error {
	return func(ctx context.Context, c *topgg.Client) error {
		return c.UpdateProject(ctx, topgg.ProjectUpdate{Headline: map[string]string{"en": s}})
	}
}

func pageContent(s string) func(context.Context, *topgg.Client) error {
	return func(ctx context.Context, c *topgg.Client) error {
		return c.UpdateProject(ctx, topgg.ProjectUpdate{PageContent: map[string]string{"ko": s}})
	}
}

func TestValidateProjectUpdate(t *testing.T) {
	t.Parallel()
	runBoundaries(t, []boundary{
		{"headline 2", "headline[en]", headline("ab")},
		{"headline 3", "", headline("abc")},
		{"headline 3 two-byte", "", headline("ééé")},
		{"headline 2 three-byte", "headline[en]", headline("日本")},
		{"headline 140", "", headline(runes("a", 140))},
		{"headline 140 three-byte", "", headline(runes("日", 140))},
		{"headline 141", "headline[en]", headline(runes("a", 141))},
		{"headline 141 two-byte", "headline[en]", headline(runes("é", 141))},
		{"page 299", "page_content[ko]", pageContent(runes("a", 299))},
		{"page 300", "", pageContent(runes("a", 300))},
		{"page 299 multi-byte", "page_content[ko]", pageContent(runes("한", 299))},
		{"page 300 multi-byte", "", pageContent(runes("한", 300))},
		{"page 50000", "", pageContent(runes("x", 50000))},
		{"page 50000 four-byte", "", pageContent(runes("😀", 50000))},
		{"page 50001", "page_content[ko]", pageContent(runes("x", 50001))},
		{"neither member", "headline/page_content", func(ctx context.Context, c *topgg.Client) error {
			return c.UpdateProject(ctx, topgg.ProjectUpdate{Headline: map[string]string{}})
		}},
		{"bad locale", "headline[xx]", func(ctx context.Context, c *topgg.Client) error {
			return c.UpdateProject(ctx, topgg.ProjectUpdate{Headline: map[string]string{"en": "fine headline", "xx": "fine headline"}})
		}},
		{"bad page locale", "page_content[en-US]", func(ctx context.Context, c *topgg.Client) error {
			return c.UpdateProject(ctx, topgg.ProjectUpdate{PageContent: map[string]string{"en-US": runes("a", 300)}})
		}},
		{"all 16 locales", "", func(ctx context.Context, c *topgg.Client) error {
			u := topgg.ProjectUpdate{Headline: map[string]string{}}
			for _, l := range []string{"en", "de", "fr", "pt", "tr", "hi", "ja", "ar", "nl", "ko", "it", "es", "ru", "uk", "vi", "zh"} {
				u.Headline[l] = "headline " + l
			}
			return c.UpdateProject(ctx, u)
		}},
	})
}

func announce(title, content string, cat string) func(context.Context, *topgg.Client) error {
	return func(ctx context.Context, c *topgg.Client) error {
		_, err := c.PostAnnouncement(ctx, topgg.NewAnnouncement{Title: title, Content: content, Category: cat})
		return err
	}
}

func TestValidateAnnouncement(t *testing.T) {
	t.Parallel()
	const content = "Ten chars!"
	runBoundaries(t, []boundary{
		{"title 2", "title", announce("ab", content, "")},
		{"title 2 three-byte", "title", announce("日本", content, "")},
		{"title 3", "", announce("abc", content, "")},
		{"title 3 two-byte", "", announce("ééé", content, "")},
		{"title 100", "", announce(runes("t", 100), content, "")},
		{"title 101", "title", announce(runes("t", 101), content, "")},
		{"content 9", "content", announce("Title", runes("c", 9), "")},
		{"content 10", "", announce("Title", runes("日", 10), "")},
		{"content 2000", "", announce("Title", runes("c", 2000), "")},
		{"content 2001", "content", announce("Title", runes("c", 2001), "")},
		{"category", "category", announce("Title", content, "news")},
	})
}

func metrics(m topgg.Metrics) func(context.Context, *topgg.Client) error {
	return func(ctx context.Context, c *topgg.Client) error { return c.UpdateMetrics(ctx, m) }
}

func TestValidateMetrics(t *testing.T) {
	t.Parallel()
	t.Run("bot", func(t *testing.T) {
		t.Parallel()
		runBoundaries(t, []boundary{
			{"no field", "metrics", metrics(topgg.BotMetrics{})},
			{"servers -1", "metrics.server_count", metrics(topgg.BotMetrics{ServerCount: new(-1)})},
			{"shards -1", "metrics.shard_count", metrics(topgg.BotMetrics{ServerCount: new(1), ShardCount: new(-1)})},
			{"zero", "", metrics(topgg.BotMetrics{ServerCount: new(0), ShardCount: new(0)})},
			{"nil", "metrics", metrics(nil)},
			{"nil pointer", "metrics", metrics((*topgg.BotMetrics)(nil))},
		})
	})
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		runBoundaries(t, []boundary{
			{"no field", "metrics", metrics(topgg.ServerMetrics{})},
			{"members -1", "metrics.member_count", metrics(topgg.ServerMetrics{MemberCount: new(-1)})},
			{"online -1", "metrics.online_count", metrics(topgg.ServerMetrics{OnlineCount: new(-1)})},
			{"online > member", "metrics.online_count", metrics(topgg.ServerMetrics{MemberCount: new(10), OnlineCount: new(11)})},
			{"online = member", "", metrics(topgg.ServerMetrics{MemberCount: new(10), OnlineCount: new(10)})},
			{"nil pointer", "metrics", metrics((*topgg.ServerMetrics)(nil))},
		}, topggtest.WithProject(topggtest.DiscordServer()))
	})
	t.Run("game", func(t *testing.T) {
		t.Parallel()
		runBoundaries(t, []boundary{
			{"players -1", "metrics.player_count", metrics(topgg.GameMetrics{PlayerCount: -1})},
			{"players 0", "", metrics(topgg.GameMetrics{})},
			{"nil pointer", "metrics", metrics((*topgg.GameMetrics)(nil))},
		}, topggtest.WithProject(topggtest.RobloxGame()))
	})
}

// TestValidateProjectKind: once Project() taught the client the project's kind, a
// payload of another kind is refused without a request.
func TestValidateProjectKind(t *testing.T) {
	t.Parallel()
	kinds := map[string]topggtest.Project{"bot": topggtest.DiscordBot(), "server": topggtest.DiscordServer(), "game": topggtest.RobloxGame()}
	payloads := map[string]topgg.Metrics{
		"bot":    topgg.BotMetrics{ServerCount: new(1)},
		"server": topgg.ServerMetrics{MemberCount: new(1)},
		"game":   topgg.GameMetrics{PlayerCount: 1},
	}
	for kind, p := range kinds {
		for payloadKind, m := range payloads {
			t.Run(kind+"/"+payloadKind, func(t *testing.T) {
				t.Parallel()
				srv := newServer(t, topggtest.WithProject(p))
				c := newClient(t, srv)
				_, err := c.Project(t.Context())
				require.NoError(t, err)

				err = c.UpdateMetrics(t.Context(), m)
				batchErr := c.PostMetricsBatch(t.Context(), []topgg.MetricsSample{{Metrics: m}})
				if kind == payloadKind {
					require.NoError(t, err)
					require.NoError(t, batchErr)
					require.Len(t, srv.Requests(), 3)
					return
				}
				requireInvalid(t, err, "metrics")
				requireInvalid(t, batchErr, "data[0].metrics")
				require.Len(t, srv.Requests(), 1, "only the GET of the project")
			})
		}
	}
}

func batch(n int, mod func(i int, s *topgg.MetricsSample)) func(context.Context, *topgg.Client) error {
	return func(ctx context.Context, c *topgg.Client) error {
		samples := make([]topgg.MetricsSample, n)
		for i := range samples {
			samples[i] = topgg.MetricsSample{Timestamp: time.Now().Add(-time.Duration(n-i) * time.Minute), Metrics: topgg.BotMetrics{ServerCount: new(i)}}
			if mod != nil {
				mod(i, &samples[i])
			}
		}
		return c.PostMetricsBatch(ctx, samples)
	}
}

func TestValidateBatch(t *testing.T) {
	t.Parallel()
	runBoundaries(t, []boundary{
		{"0 entries", "data", batch(0, nil)},
		{"nil", "data", func(ctx context.Context, c *topgg.Client) error { return c.PostMetricsBatch(ctx, nil) }},
		{"1 entry", "", batch(1, nil)},
		{"100 entries", "", batch(100, nil)},
		{"101 entries", "data", batch(101, nil)},
		{"invalid entry", "data[3].metrics.server_count", batch(5, func(i int, s *topgg.MetricsSample) {
			if i == 3 {
				s.Metrics = topgg.BotMetrics{ServerCount: new(-1)}
			}
		})},
		{"empty entry", "data[1].metrics", batch(2, func(i int, s *topgg.MetricsSample) {
			if i == 1 {
				s.Metrics = topgg.BotMetrics{}
			}
		})},
		{"nil entry", "data[0].metrics", batch(2, func(i int, s *topgg.MetricsSample) {
			if i == 0 {
				s.Metrics = nil
			}
		})},
		{"mixed kinds", "data[1].metrics", batch(2, func(i int, s *topgg.MetricsSample) {
			if i == 1 {
				s.Metrics = topgg.GameMetrics{PlayerCount: 1}
			}
		})},
		{"timestamp 6 min ahead", "data[1].timestamp", batch(2, func(i int, s *topgg.MetricsSample) {
			if i == 1 {
				s.Timestamp = time.Now().Add(6 * time.Minute)
			}
		})},
		{"timestamp 4 min ahead", "", batch(2, func(i int, s *topgg.MetricsSample) {
			if i == 1 {
				s.Timestamp = time.Now().Add(4 * time.Minute)
			}
		})},
		{"no timestamps", "", batch(3, func(_ int, s *topgg.MetricsSample) { s.Timestamp = time.Time{} })},
	})
}

func votesFrom(start time.Time) func(context.Context, *topgg.Client) error {
	return func(ctx context.Context, c *topgg.Client) error {
		_, err := c.Votes(ctx, topgg.VotesQuery{StartDate: start})
		return err
	}
}

func TestValidateVotes(t *testing.T) {
	t.Parallel()
	runBoundaries(t, []boundary{
		{"1 year + 1 minute back", "startDate", votesFrom(time.Now().AddDate(-1, 0, 0).Add(-time.Minute))},
		{"1 year - 1 minute back", "", votesFrom(time.Now().AddDate(-1, 0, 0).Add(time.Minute))},
		{"no startDate nor cursor", "startDate", votesFrom(time.Time{})},
		{"old startDate with cursor", "", func(ctx context.Context, c *topgg.Client) error {
			// A cursor wins: an old startDate beside it is not sent, so not checked.
			p, err := c.Votes(ctx, topgg.VotesQuery{Cursor: "not-a-real-cursor", StartDate: time.Now().AddDate(-3, 0, 0)})
			if err == nil || p != nil {
				return fmt.Errorf("want the service's refusal of the cursor, got %v", err)
			}
			var apiErr *topgg.APIError
			if !errorsAs(err, &apiErr) || apiErr.StatusCode != 400 {
				return fmt.Errorf("want 400, got %v", err)
			}
			return nil
		}},
	})
	t.Run("AllVotes", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c := newClient(t, srv)
		var errs []error
		for _, err := range c.AllVotes(t.Context(), time.Now().AddDate(-2, 0, 0)) {
			errs = append(errs, err)
		}
		require.Len(t, errs, 1)
		requireInvalid(t, errs[0], "startDate")
		require.Empty(t, srv.Requests())
	})
}

func voteStatus(user string, src topgg.UserIDKind) func(context.Context, *topgg.Client) error {
	return func(ctx context.Context, c *topgg.Client) error {
		_, err := c.VoteStatus(ctx, user, src)
		return err
	}
}

func TestValidateVoteStatus(t *testing.T) {
	t.Parallel()
	runBoundaries(t, []boundary{
		{"empty id", "user_id", voteStatus("", "")},
		{"letters", "user_id", voteStatus("abc", "")},
		{"path injection", "user_id", voteStatus("1/../../x", "")},
		{"21 digits", "user_id", voteStatus("123456789012345678901", "")},
		{"20 digits", "", voteStatus("12345678901234567890", "")},
		{"neutral source word", "source", voteStatus("123", "native")},
		{"bad source", "source", voteStatus("123", "chatplatform")},
		{"discord", "", voteStatus("123", topgg.UserIDDiscord)},
	})
}

func legacy(f func(context.Context, *topgg.Legacy) error) func(context.Context, *topgg.Client) error {
	return func(ctx context.Context, c *topgg.Client) error { return f(ctx, c.Legacy()) }
}

func search(q topgg.BotQuery) func(context.Context, *topgg.Client) error {
	return legacy(func(ctx context.Context, l *topgg.Legacy) error {
		_, err := l.SearchBots(ctx, q)
		return err
	})
}

func TestValidateLegacy(t *testing.T) {
	t.Parallel()
	own := topggtest.DiscordBot().PlatformID
	runBoundaries(t, []boundary{
		{"limit 500", "", search(topgg.BotQuery{Limit: 500})},
		{"limit 501", "limit", search(topgg.BotQuery{Limit: 501})},
		{"limit -1", "limit", search(topgg.BotQuery{Limit: -1})},
		{"offset -1", "offset", search(topgg.BotQuery{Offset: -1})},
		{"sort by name", "sort", search(topgg.BotQuery{Sort: "username"})},
		{"sort dash", "sort", search(topgg.BotQuery{Sort: "-"})},
		{"sort two dashes", "sort", search(topgg.BotQuery{Sort: "--date"})},
		{"sort desc date", "", search(topgg.BotQuery{Sort: "-date"})},
		{"bad field", "fields[1]", search(topgg.BotQuery{Fields: []string{"id", "password"}})},
		{"neutral field word", "fields[0]", search(topgg.BotQuery{Fields: []string{"coderepo"}})},
		{"real field words", "", search(topgg.BotQuery{Fields: []string{"github", "donatebotguildid"}})},
		{"bot fields", "fields[0]", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			_, err := l.Bot(ctx, own, "donationbotguildid")
			return err
		})},
		{"bot id", "bot_id", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			_, err := l.Bot(ctx, "12a")
			return err
		})},
		{"voters bot id", "bot_id", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			_, err := l.Voters(ctx, "")
			return err
		})},
		{"stats bot id", "bot_id", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			_, err := l.Stats(ctx, "-1")
			return err
		})},
		{"check user id", "userId", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			_, err := l.HasVoted(ctx, own, "")
			return err
		})},
		{"check bot id", "bot_id", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			_, err := l.HasVoted(ctx, "x", "1")
			return err
		})},
		{"post stats bot id", "bot_id", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			return l.PostStats(ctx, "", topgg.BotStats{ServerCount: 1})
		})},
		{"post stats negative", "server_count", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			return l.PostStats(ctx, own, topgg.BotStats{ServerCount: -1})
		})},
		{"post stats negative shard", "shards[1]", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			return l.PostStats(ctx, own, topgg.BotStats{ServerCount: 1, Shards: []int{1, -1}})
		})},
		{"post stats shard id = count", "shard_id", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			return l.PostStats(ctx, own, topgg.BotStats{ServerCount: 1, ShardID: new(2), ShardCount: 2})
		})},
		{"post stats shard id < count", "", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			return l.PostStats(ctx, own, topgg.BotStats{ServerCount: 1, ShardID: new(1), ShardCount: 2})
		})},
		{"post stats negative shard id", "shard_id", legacy(func(ctx context.Context, l *topgg.Legacy) error {
			return l.PostStats(ctx, own, topgg.BotStats{ServerCount: 1, ShardID: new(-1)})
		})},
	})
}

func commands(defs ...string) func(context.Context, *topgg.Client) error {
	return func(ctx context.Context, c *topgg.Client) error {
		raw := make([]json.RawMessage, len(defs))
		for i, d := range defs {
			raw[i] = json.RawMessage(d)
		}
		return c.SetCommands(ctx, raw)
	}
}

func TestValidateCommands(t *testing.T) {
	t.Parallel()
	runBoundaries(t, []boundary{
		{"not an object", "commands[0]", commands(`"vote"`)},
		{"no name", "commands[1].name", commands(`{"name":"a","description":"b"}`, `{"description":"b"}`)},
		{"slash without description", "commands[0].description", commands(`{"name":"vote"}`)},
		{"user command without description", "", commands(`{"name":"Profile","type":2}`)},
	})
}

func TestValidateMethods(t *testing.T) {
	t.Parallel()
	// The rules apply without a client too.
	require.NoError(t, topgg.Validate(topgg.NewAnnouncement{Title: "abc", Content: runes("é", 10)}))
	requireInvalid(t, topgg.Validate(topgg.NewAnnouncement{Title: "ab", Content: runes("é", 10)}), "title")
	require.NoError(t, topgg.Validate(topgg.ProjectUpdate{Headline: map[string]string{"en": "abc"}}))
	requireInvalid(t, topgg.Validate(topgg.ProjectUpdate{}), "headline/page_content")
	require.NoError(t, topgg.Validate(topgg.BotMetrics{ShardCount: new(1)}))
	requireInvalid(t, topgg.Validate(topgg.ServerMetrics{MemberCount: new(1), OnlineCount: new(2)}), "metrics.online_count")
	requireInvalid(t, topgg.Validate(topgg.GameMetrics{PlayerCount: -5}), "metrics.player_count")
}
