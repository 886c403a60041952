package voterperks_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterperks"
)

const (
	// wait bounds every wait: generous for a loaded 2-core machine under
	// -race, never reached when the code works.
	wait = 15 * time.Second
	tick = 5 * time.Millisecond

	voterRole   = "900000000000000777"
	premiumName = "premium"
	premiumText = "premium content"
)

// premiumCommand is the bot's own command that only voters may use.
var premiumCommand = &discordgo.ApplicationCommand{Name: premiumName, Description: "For voters only"}

// premium answers /premium: what the gate lets voters reach.
func premium(s *discordgo.Session, i *discordgo.InteractionCreate) {
	_ = s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: premiumText},
	})
}

// world is one test's fake Discord (one guild and one real discordgo
// session per shard) and fake Top.gg.
type world struct {
	t        *testing.T
	dc       *discordtest.Server
	tg       *topggtest.Server
	client   *topgg.Client
	sessions []*discordgo.Session
	guilds   []string         // guilds[i] is on shard i
	texts    voterperks.Texts // the perks' texts; zero: the defaults

	runs testkit.Runs[*plugin.Plugin]
}

func newWorld(t *testing.T, shards int) *world {
	t.Helper()
	w := &world{t: t}
	for i := range shards {
		w.guilds = append(w.guilds, discordtest.GuildIDForShard(0, i, shards))
	}
	w.dc = testkit.Discord(t, slices.Repeat([]int{1}, shards))
	w.tg = testkit.TopGG(t, w.dc)
	var err error
	w.client, err = topgg.New(w.tg.Token(), topgg.WithBaseURL(w.tg.URL), topgg.WithHTTPClient(w.tg.Client()))
	require.NoError(t, err)
	w.sessions = testkit.Sessions(t, w.dc, shards)
	// Once the bots stopped (their cleanups run first): every interaction
	// had one answer, Discord refused none (a second handler of /vote would
	// have its answer refused as already acknowledged).
	t.Cleanup(func() {
		for _, c := range w.dc.Requests() {
			if strings.HasSuffix(c.Path, "/callback") {
				assert.Less(t, c.Status, 300, "an interaction's answer was refused: %s", c.Body)
			}
		}
	})
	// The bot registers its commands on Discord: the perks' and its own.
	cmds := append(voterperks.Commands(voterperks.Texts{}), premiumCommand)
	_, err = w.sessions[0].ApplicationCommandBulkOverwrite(w.dc.ApplicationID(), "", cmds)
	require.NoError(t, err)
	return w
}

// config is a plugin Config for a test: votes only, polled often.
func (w *world) config() plugin.Config {
	return plugin.Config{
		Autopost:         "off",
		SyncCommands:     new(false),
		VotePollInterval: new(20 * time.Millisecond),
		VoteLookback:     13 * time.Hour,
		VoteRetryDelay:   20 * time.Millisecond,
	}
}

// perks returns the VoterPerks of the tests: the voter role in the guild of
// shard 0, reminders on.
func (w *world) perks() plugin.VoterPerks {
	return plugin.VoterPerks{
		BotID: w.dc.ApplicationID(), Role: &voterperks.Role{GuildID: w.guilds[0], RoleID: voterRole}, Reminders: true,
		Texts: w.texts,
	}
}

// bot makes a plugin with the perks, attached to the sessions of shards,
// whose interactions the perks answer (/vote and /leaderboard, which Attach
// adds, and /premium through the gate). opts give the state (WithState).
func (w *world) bot(cfg plugin.Config, shards []int, opts ...plugin.Option) *plugin.Plugin {
	w.t.Helper()
	opts = append([]plugin.Option{plugin.WithLogger(testLogger()), plugin.WithVoterPerks(w.perks())}, opts...)
	p, err := plugin.New(w.client, cfg, opts...)
	require.NoError(w.t, err)
	var ss []*discordgo.Session
	for _, i := range shards {
		ss = append(ss, w.sessions[i])
		w.sessions[i].AddHandler(p.Perks().Gate(premium, premiumName))
	}
	require.NoError(w.t, p.Attach(ss...))
	return p
}

func (w *world) start(p *plugin.Plugin) { w.runs.Start(w.t, p, p.Run) }

// stop cancels p's Run and returns its error once it returned.
func (w *world) stop(p *plugin.Plugin) error { return w.runs.Stop(p) }

func (w *world) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	w.t.Cleanup(cancel)
	return ctx
}

// interact makes user use command in the guild of shard (with the remind
// option when remind is not nil) and returns the bot's reply.
func (w *world) interact(shard int, command, user string, remind *bool) discordtest.InteractionReply {
	w.t.Helper()
	ctx := w.ctx()
	spec := discordtest.InteractionSpec{Command: command, GuildID: w.guilds[shard], UserID: user}
	if remind != nil {
		spec.Options = []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: voterperks.RemindOption, Type: discordgo.ApplicationCommandOptionBoolean, Value: *remind},
		}
	}
	id, _, err := w.dc.Interact(ctx, spec)
	require.NoError(w.t, err)
	reply, err := w.dc.WaitInteractionReply(ctx, id)
	require.NoError(w.t, err)
	return reply
}

// vote is a vote of user number n, made at created, expiring after life.
func vote(n int, created time.Time, life time.Duration) topggtest.Vote {
	return topggtest.Vote{UserID: fmt.Sprintf("81%016d", n), PlatformID: fmt.Sprintf("31%016d", n), Weight: 1,
		CreatedAt: created, ExpiresAt: created.Add(life)}
}

// roleChanges counts the role grants and removals per user.
func (w *world) roleChanges() (added, removed map[string]int) {
	added, removed = map[string]int{}, map[string]int{}
	for _, c := range w.dc.RoleChanges() {
		if c.Added {
			added[c.UserID]++
		} else {
			removed[c.UserID]++
		}
	}
	return added, removed
}

// dmsTo returns the direct messages user got.
func (w *world) dmsTo(user string) []discordtest.DirectMessage {
	var out []discordtest.DirectMessage
	for _, m := range w.dc.DirectMessages() {
		if m.UserID == user {
			out = append(out, m)
		}
	}
	return out
}

// newSession replaces the session of shard i (closed) with a new one, not
// open: a restarted process's.
func (w *world) newSession(i int) {
	w.t.Helper()
	require.NoError(w.t, w.sessions[i].Close())
	s, err := w.dc.NewSession(i, len(w.guilds))
	require.NoError(w.t, err)
	w.sessions[i] = s
}

// testLogger is quiet unless VOTERPERKS_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("VOTERPERKS_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// pg is the package's PostgreSQL, started by the first test that needs it.
var pg = pgstoretest.New("voterperks")

// TestMain turns the test binary into a process of the killed-leader test
// when asked (childMain); else it says in one line why the fleet or
// PostgreSQL tests skip when redis-server or PostgreSQL is missing (and
// fails under CI).
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	if !redistest.Announce("voterperks") {
		os.Exit(1)
	}
	os.Exit(pg.Main(m))
}
