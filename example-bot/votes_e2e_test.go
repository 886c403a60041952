package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// pg is the package's PostgreSQL, started on first use (TestMain stops it).
var pg = pgstoretest.New("example-bot")

// pgPassword is in every DATABASE_URL of the tests: no output may show it
// (the fake server trusts 127.0.0.1, so any password gets in).
const pgPassword = "pg-pw-6b1d0e7a"

// databaseURL returns a fresh database of the package's PostgreSQL, as the
// bot's DATABASE_URL, with a password.
func databaseURL(t *testing.T) string {
	t.Helper()
	return strings.Replace(pg.URL(t), "postgres@", "postgres:"+pgPassword+"@", 1)
}

// command runs /name as user in guild and returns the (ephemeral) reply.
func (e *e2e) command(ctx context.Context, name, user, guild string) string {
	e.t.Helper()
	reply, err := e.reply(ctx, name, user, guild)
	require.NoError(e.t, err)
	return reply
}

// reply runs /name as user in guild and returns the reply, within wait.
func (e *e2e) reply(ctx context.Context, name, user, guild string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	id, _, err := e.dc.Interact(ctx, discordtest.InteractionSpec{Command: name, GuildID: guild, UserID: user})
	if err != nil {
		return "", err
	}
	reply, err := e.dc.WaitInteractionReply(ctx, id)
	if err != nil {
		return "", err
	}
	return reply.Content, nil
}

// ledgerVotes are the votes of the ledger tests. ann voted 13 hours ago
// (weight 1) and again 30 minutes ago on a weekend (weight 2), both in the
// history before the bot starts: a streak of 2, a total of 3, 3 points. ben
// votes once, by webhook, while the bot runs: 1 point. cat votes 11.5 hours ago
// (history) and now (webhook): a streak of 2, 2 points.
type ledgerVotes struct{ history, hooks []topggtest.Vote }

func newLedgerVotes() ledgerVotes {
	now := time.Now().UTC()
	v := func(n, weight int, created time.Time) topggtest.Vote {
		return topggtest.Vote{UserID: fmt.Sprintf("82%016d", n), PlatformID: fmt.Sprintf("32%016d", n), Weight: weight,
			CreatedAt: created, ExpiresAt: created.Add(12 * time.Hour)}
	}
	lv := ledgerVotes{
		history: []topggtest.Vote{v(1, 1, now.Add(-13*time.Hour)), v(1, 2, now.Add(-30*time.Minute)), v(3, 1, now.Add(-11*time.Hour-30*time.Minute))},
		hooks:   []topggtest.Vote{v(2, 1, now), v(3, 1, now)},
	}
	return lv
}

// ann, ben and cat are the voters of ledgerVotes.
var annID, ben, cat = fmt.Sprintf("32%016d", 1), fmt.Sprintf("32%016d", 2), fmt.Sprintf("32%016d", 3)

// answerWith runs /name as user in guild until the reply holds want (a
// vote's credit may still be under way), and returns the reply.
func (e *e2e) answerWith(ctx context.Context, name, user, guild, want string) string {
	e.t.Helper()
	var reply string
	var err error
	ok := assert.Eventually(e.t, func() bool {
		reply, err = e.reply(ctx, name, user, guild) // no require off the test goroutine
		return err == nil && strings.Contains(reply, want)
	}, wait, 100*time.Millisecond)
	require.True(e.t, ok, "/%s for %s never said %q; last reply %q (%v)", name, user, want, reply, err)
	return reply
}

// requireLedgerAnswers checks /vote and /leaderboard in guild: every vote of
// ledgerVotes counted once, in the ledger and in the points.
func (e *e2e) requireLedgerAnswers(ctx context.Context, guild string) {
	e.t.Helper()
	ann := e.answerWith(ctx, "vote", annID, guild, "Total (weekend votes count twice): 3 · points: 3")
	assert.Contains(e.t, ann, "Your vote is active until")
	assert.Contains(e.t, ann, "Streak: 2")
	assert.Contains(e.t, ann, "all time: 2")
	e.answerWith(ctx, "vote", ben, guild, "Streak: 1 · votes this month: 1 · all time: 1\nTotal (weekend votes count twice): 1 · points: 1")
	assert.Contains(e.t, e.answerWith(ctx, "vote", cat, guild, "Total (weekend votes count twice): 2 · points: 2"), "Streak: 2")
	// A follower started beside its leader answers for a user without a vote
	// once its Mirror's reload (1 s, then doubling) sees the history read.
	e.answerWith(ctx, "vote", "329999999999999999", guild, "You have no active vote right now")

	board := e.command(ctx, "leaderboard", ben, guild)
	assert.True(e.t, strings.HasPrefix(board, "Top voters of "+time.Now().UTC().Format("January 2006")+":"), board)
	lines := strings.Split(board, "\n")
	require.Len(e.t, lines, 4, board)
	assert.True(e.t, strings.HasPrefix(lines[1], "1. <@"+annID+">"), board)
	assert.Equal(e.t, "2. <@"+cat+">: 2 votes", lines[2])
	assert.Equal(e.t, "3. <@"+ben+">: 1 vote", lines[3])
}

// runLedgerE2E: votes arrive by the history (before the bot starts) and by
// webhook (while it runs); /vote then shows each user's streak, total and
// points, and /leaderboard this month's top voters, on the state env selects.
// ben then opts in to reminders; it returns the bot, once stopped, and its
// TOPGG_STATE_DIR.
func runLedgerE2E(t *testing.T, env map[string]string) (*proc, string) {
	e, hp := newWebhookE2E(t, false)
	maps.Copy(e.env, env)
	e.env["TOPGG_VOTE_LOOKBACK"] = "24h" // ann's first vote is 13 hours old
	// One history read at start: the votes added later come by webhook only,
	// however slowly this machine delivers them.
	e.env["TOPGG_VOTE_POLL_INTERVAL"] = "1h"
	ctx := e.ctx()
	lv := newLedgerVotes()
	e.tg.AddVote(lv.history...)
	e.waitDeliveries(len(lv.history)) // failed: no bot yet, so the history brings them
	bot := e.startHooked(hp)
	require.Eventually(t, func() bool { return len(bot.sourcesOf(annID)) > 0 && len(bot.sourcesOf(cat)) > 0 }, wait, tick)
	e.tg.AddVote(lv.hooks...)
	require.Equal(t, []string{"webhook"}, bot.waitSources(ben))
	e.requireLedgerAnswers(ctx, guild(0, 0))
	e.requireLedgerAnswers(ctx, guild(0, 1)) // the other shard's session answers too
	assert.Contains(t, e.useVote(ctx, ben, new(true)), "I will send you a direct message when you can vote again.")
	bot.terminate()
	return bot, e.state
}

// requireOptedIn requires that ben's opt-in is in s.
func requireOptedIn(t *testing.T, s voterewards.ReminderStore) {
	t.Helper()
	on, _, err := s.Reminder(t.Context(), ben)
	require.NoError(t, err)
	assert.True(t, on, "ben's opt-in is not in the state")
}

// TestE2ELedgerEmbedded: /vote and /leaderboard on the embedded state
// (bbolt), the points and ben's opt-in in TOPGG_STATE_DIR.
func TestE2ELedgerEmbedded(t *testing.T) {
	_, dir := runLedgerE2E(t, nil)
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	requireOptedIn(t, s)
}

// TestE2ELedgerPostgres: the same with DATABASE_URL: the state (votes,
// ledger, ben's opt-in) and the points in PostgreSQL, nothing in the state
// directory; the password never shows.
func TestE2ELedgerPostgres(t *testing.T) {
	dbURL := databaseURL(t)
	bot, dir := runLedgerE2E(t, map[string]string{"DATABASE_URL": dbURL})
	assert.NoFileExists(t, filepath.Join(dir, "voterewards.db"), "the state directory was used beside PostgreSQL")
	assert.NotContains(t, bot.stderr.String()+bot.stdout.String(), pgPassword)
	pool, err := pgstore.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s, err := pgstore.Open(t.Context(), pool, pgstore.Config{})
	require.NoError(t, err)
	requireOptedIn(t, s)
}

// TestE2EDatabaseUnreachable: a DATABASE_URL whose server does not answer
// stops the bot with status 1, the password shown nowhere.
func TestE2EDatabaseUnreachable(t *testing.T) {
	e := newE2E(t)
	e.env["DATABASE_URL"] = "postgres://bot:" + pgPassword + "@" + freeAddr(t) + "/bot?connect_timeout=2"
	bot := e.startBot()
	assert.Equal(t, exitFailed, bot.exitCode(wait))
	assert.Contains(t, bot.stderr.String(), "DATABASE_URL")
	assert.NotContains(t, bot.stderr.String()+bot.stdout.String(), pgPassword)
}

// TestE2ELedgerFleetOfThree: three processes (one shard each) share Redis and
// PostgreSQL; votes arrive by the history and by webhook to any process;
// /vote and /leaderboard answer the same in every process.
func TestE2ELedgerFleetOfThree(t *testing.T) {
	if testing.Short() || botBinary == "" {
		t.Skip("end-to-end test: runs the built bot (not with -short)")
	}
	t.Parallel()
	const shardCount, secret = 3, "whs_fleet_ledger_secret"
	rdb := redistest.Start(t)
	dbURL := databaseURL(t)
	guilds := []string{discordtest.GuildIDForShard(0, 0, shardCount), discordtest.GuildIDForShard(0, 1, shardCount),
		discordtest.GuildIDForShard(0, 2, shardCount)}
	dc, err := discordtest.NewServer(discordtest.WithToken(e2eDiscordToken), discordtest.WithShardCount(shardCount), discordtest.WithGuilds(guilds...))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	project := topggtest.DiscordBot()
	project.PlatformID = dc.BotUserID()
	hookAddrs := freeAddrs(t, 3)
	balancer, balancerURL := newWebhookBalancer(t, hookAddrs)
	tg, err := topggtest.NewServer(topggtest.WithToken(e2eTopggToken), topggtest.WithProject(project),
		topggtest.WithWebhook(balancerURL+"/topgg/webhook", secret),
		topggtest.WithWebhookRetries(5*time.Second, 50*time.Millisecond, 100*time.Millisecond, 200*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	e := &e2e{t: t, dc: dc, tg: tg, env: map[string]string{
		"DISCORD_TOKEN": e2eDiscordToken, "TOPGG_TOKEN": e2eTopggToken, "TOPGG_API_URL": tg.URL, "DISCORD_API_URL": dc.APIBase(),
		"TOPGG_AUTOPOST_INTERVAL": "200ms", "TOPGG_VOTE_POLL_INTERVAL": "100ms", "TOPGG_VOTE_LOOKBACK": "24h",
		"SHARD_COUNT": fmt.Sprint(shardCount), "LOG_FORMAT": "json", "LOG_LEVEL": "debug",
		"REDIS_URL": rdb.URL(), "TOPGG_FLEET_LEASE": fleetLease.String(), "TOPGG_WEBHOOK_SECRET": secret, "DATABASE_URL": dbURL,
	}}
	lv := newLedgerVotes()
	tg.AddVote(lv.history...)
	var procs []*proc
	for i := range shardCount {
		env := maps.Clone(e.env)
		env["SHARD_IDS"], env["TOPGG_WEBHOOK_ADDR"], env["TOPGG_STATE_DIR"] = fmt.Sprint(i), hookAddrs[i], t.TempDir()
		procs = append(procs, e.start(env))
	}
	for _, p := range procs {
		p.waitMsg("bot is online")
	}
	ctx := e.ctx()
	// The history's votes are in the store (and so in every process's ledger)
	// once cat's vote answers active in a follower.
	e.answerWith(ctx, "vote", cat, guilds[2], "Your vote is active")
	balancer.open.Store(true)
	tg.AddVote(lv.hooks...)
	for _, g := range guilds {
		e.requireLedgerAnswers(ctx, g)
	}
	for _, p := range procs {
		p.terminate()
		assert.NotContains(t, p.stderr.String()+p.stdout.String(), pgPassword)
	}
}

// TestE2ESIGTERMDuringRateLimitedReward: Discord answers every role grant 429
// with a minute's Retry-After. The bot waits it out under the handler's
// context, so a SIGTERM ends the wait when the plugin cancels the handlers:
// the bot exits 0 within 10 s, where discordgo's own sleep made it exit 1
// after its 8 s budget.
func TestE2ESIGTERMDuringRateLimitedReward(t *testing.T) {
	e := newE2E(t)
	require.NoError(t, e.dc.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: time.Minute, Times: 100}))
	e.tg.AddVote(makeVotes(2)...)
	bot := e.startBot()
	bot.waitMsg("bot is online")
	bot.waitMsg("Discord is rate-limiting the bot; waiting")

	bot.terminate()
	assert.Equal(t, 1, bot.countMsg("gateway connections closed"), "the shards were not closed")
	assert.Zero(t, bot.countMsg("vote rewarded: role given"))
	assert.Empty(t, e.dc.MemberRoles(guild(0, 0), makeVotes(1)[0].PlatformID))
}

// TestE2EEndlessAnswerToRoleGrant: Discord answers a role grant with a body
// that never ends. The bot reads 8 MiB of it, fails that attempt with a
// bounded-body error (before: it read until it had grown past 500 MiB), and
// the next attempt gives the role.
func TestE2EEndlessAnswerToRoleGrant(t *testing.T) {
	e := newE2E(t)
	require.NoError(t, e.dc.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", Body: "{", Endless: true}))
	votes := makeVotes(1)
	e.tg.AddVote(votes...)
	bot := e.startBot()
	bot.waitMsg("vote rewarded: role given")
	assert.Contains(t, bot.stderr.String(), "response body too large (over 8388608 bytes)")
	assert.Equal(t, []string{rewardRole}, e.dc.MemberRoles(guild(0, 0), votes[0].PlatformID))
	bot.terminate()
}

// useVote runs /vote as user, with remind when given, and returns the reply.
func (e *e2e) useVote(ctx context.Context, user string, remind *bool) string {
	e.t.Helper()
	spec := discordtest.InteractionSpec{Command: "vote", GuildID: guild(0, 0), UserID: user}
	if remind != nil {
		spec.Options = []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: "remind", Type: discordgo.ApplicationCommandOptionBoolean, Value: *remind},
		}
	}
	id, _, err := e.dc.Interact(ctx, spec)
	require.NoError(e.t, err)
	reply, err := e.dc.WaitInteractionReply(ctx, id)
	require.NoError(e.t, err)
	return reply.Content
}

// countUserMsg counts the log records with message msg about user.
func (p *proc) countUserMsg(msg, user string) int {
	n := 0
	for _, rec := range p.records() {
		if rec["msg"] == msg && rec["user"] == user {
			n++
		}
	}
	return n
}

// TestE2EReminderAtExpiry: users opt in with /vote remind:True; the opt-in
// survives a restart; each vote (delivered by webhook) is rewarded, and when
// it expires the voter gets one DM, no earlier than the expiry. A user who did
// not opt in gets none; one who voted again before the expiry keeps the role
// and gets none; one whose DMs are closed loses the role and the bot does not
// retry. A restart sends no reminder again.
func TestE2EReminderAtExpiry(t *testing.T) {
	e, hp := newWebhookE2E(t, false)
	ctx := e.ctx()
	const life = 8 * time.Second // room for the rewards on a loaded machine
	alice, bob, carol, dave := freshVote(11, life), freshVote(12, life), freshVote(13, life), freshVote(14, life)
	require.NoError(t, e.dc.BlockDMs(dave.PlatformID))

	bot := e.startHooked(hp)
	on, off := true, false
	for _, u := range []topggtest.Vote{alice, carol, dave} {
		assert.Contains(t, e.useVote(ctx, u.PlatformID, &on), "I will send you a direct message when you can vote again.")
	}
	assert.Contains(t, e.useVote(ctx, bob.PlatformID, &off), "I will not remind you to vote.")
	assert.NotContains(t, e.useVote(ctx, bob.PlatformID, nil), "remind", "no option, no reminder line")
	bot.terminate()

	// The opt-ins are read back after the restart.
	bot = e.startHooked(hp)
	now := time.Now().UTC()
	// carol voted 11.5 hours ago (the vote expires in a few seconds) and
	// votes again now, before it expires: she cannot vote yet, so no reminder.
	carolEarlier := carol
	carolEarlier.CreatedAt, carolEarlier.ExpiresAt = now.Add(-11*time.Hour-30*time.Minute), now.Add(life)
	carol.CreatedAt, carol.ExpiresAt = now, now.Add(12*time.Hour)
	alice.CreatedAt, alice.ExpiresAt = now, now.Add(life)
	bob.CreatedAt, bob.ExpiresAt = now, now.Add(life)
	dave.CreatedAt, dave.ExpiresAt = now, now.Add(life)
	start := time.Now()
	e.tg.AddVote(alice, bob, carolEarlier, carol, dave)
	require.Eventually(t, func() bool {
		added, _ := e.grants()
		return added[alice.PlatformID] == 1 && added[bob.PlatformID] == 1 && added[carol.PlatformID] == 2 && added[dave.PlatformID] == 1
	}, wait, tick)
	t.Logf("5 webhook votes rewarded in %v", time.Since(start))
	require.True(t, time.Now().Before(alice.ExpiresAt), "the votes were rewarded after they expired: the test proves nothing")

	dms, err := e.dc.WaitDirectMessages(ctx, alice.PlatformID, 1)
	require.NoError(t, err)
	assert.False(t, time.Now().Before(alice.ExpiresAt), "reminded before the vote expired")
	require.Len(t, dms, 1)
	assert.Contains(t, dms[0].Content, "you can vote again now! https://top.gg/bot/"+e.dc.ApplicationID()+"/vote")
	require.Eventually(t, func() bool {
		return bot.countUserMsg("vote expired: role taken back", bob.PlatformID) == 1 &&
			bot.countUserMsg("could not send the vote reminder: Discord refused the direct message", dave.PlatformID) == 1 &&
			bot.countUserMsg("vote expired but the user voted again; role kept, no reminder", carol.PlatformID) == 1
	}, wait, tick)
	assert.Empty(t, e.dc.MemberRoles(guild(0, 0), alice.PlatformID))
	assert.Empty(t, e.dc.MemberRoles(guild(0, 0), dave.PlatformID))
	assert.Equal(t, []string{rewardRole}, e.dc.MemberRoles(guild(0, 0), carol.PlatformID), "carol voted again: she keeps the role")
	bot.terminate()

	// A restart re-reads the history: no expiry, and no reminder, comes again.
	again := e.startHooked(hp)
	e.waitPolls(3)
	again.terminate()
	for _, dm := range e.dc.DirectMessages() {
		assert.Equal(t, alice.PlatformID, dm.UserID, "only alice gets a reminder")
	}
	assert.Len(t, e.dc.DirectMessages(), 1, "a reminder was sent again")
	_, removed := e.grants()
	assert.Equal(t, map[string]int{alice.PlatformID: 1, bob.PlatformID: 1, dave.PlatformID: 1}, removed)
	assert.Equal(t, 1, strings.Count(bot.stderr.String()+again.stderr.String(), `"msg":"vote reminder sent"`))
}
