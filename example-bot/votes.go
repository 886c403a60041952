package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/snowflake"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/voterewards"
)

// Vote reminders: a user who runs /vote remind:True gets a direct message when
// their vote expires. The expiry handler sends it, which voterewards calls
// once per vote and records, so a restart sends none twice (a crash between
// the DM and that record may: at least once, like every handler).

const interactionSaveTimeout = 2 * time.Second // Discord drops an interaction not answered within 3 s

// voteCommand is the bot's one slash command.
var voteCommand = discordgo.ApplicationCommand{
	Name:        "vote",
	Description: "Get the link to vote for this bot on Top.gg, and see whether your vote is active",
	Options: []*discordgo.ApplicationCommandOption{{
		Type: discordgo.ApplicationCommandOptionBoolean, Name: remindOption,
		Description: "DM me when I can vote again (True), or stop these reminders (False)",
	}},
}

const (
	remindOption  = "remind"         // the /vote option that turns reminders on or off
	remindersFile = "reminders.json" // the opt-ins in TOPGG_STATE_DIR
)

// reminderStore keeps which users want a reminder, safe for concurrent use.
// SetReminder returns once the choice is durable.
type reminderStore interface {
	SetReminder(ctx context.Context, userID string, on bool) error
	WantsReminder(ctx context.Context, userID string) (bool, error)
}

// openReminderStore returns where the opt-ins live: in a fleet (rdb not nil),
// a Redis set every process shares (the interaction may reach any process,
// the expiry only the leader); else a file in the state directory. Nil when
// vote polling, and so expiry, is off.
func openReminderStore(cfg config, rdb redis.UniversalClient, appID string) (reminderStore, error) {
	if cfg.Plugin.VotePollInterval != nil && *cfg.Plugin.VotePollInterval == 0 {
		return nil, nil
	}
	if rdb != nil {
		return fleetReminders{rdb: rdb, key: fleet.Key(appID, "set:reminders")}, nil
	}
	return openReminders(cmp.Or(cfg.Plugin.StateDir, plugin.DefaultStateDir))
}

// fleetReminders is a reminderStore in a Redis set of the bot's key space. Its
// writes are not fenced: any process records the opt-in of its interaction.
type fleetReminders struct {
	rdb redis.UniversalClient
	key string
}

func (f fleetReminders) SetReminder(ctx context.Context, userID string, on bool) error {
	op := f.rdb.SRem
	if on {
		op = f.rdb.SAdd
	}
	if err := op(ctx, f.key, userID).Err(); err != nil {
		return fmt.Errorf("vote reminders: %w", err)
	}
	return nil
}

func (f fleetReminders) WantsReminder(ctx context.Context, userID string) (bool, error) {
	ok, err := f.rdb.SIsMember(ctx, f.key, userID).Result()
	if err != nil {
		return false, fmt.Errorf("vote reminders: %w", err)
	}
	return ok, nil
}

// fileReminders is a reminderStore in one JSON file, rewritten whole and
// atomically on each change (a crash leaves the old set or the new one), and
// kept in memory. One write per opt-in is fine at the pace of /vote.
type fileReminders struct {
	path  string
	mu    sync.Mutex // held across a write: writes are serialised
	users map[string]struct{}
}

// remindersDoc is the file's content.
type remindersDoc struct {
	Version int      `json:"version"`
	Users   []string `json:"users"`
}

// openReminders reads the opt-ins kept in dir (none without the file). A file
// it cannot read is an error: the opt-ins are never silently forgotten.
func openReminders(dir string) (*fileReminders, error) {
	f := &fileReminders{path: filepath.Join(dir, remindersFile), users: map[string]struct{}{}}
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vote reminders: reading %s: %w", f.path, pathErr(err))
	}
	var doc remindersDoc
	if err := json.Unmarshal(b, &doc); err != nil || doc.Version != 1 {
		return nil, fmt.Errorf("vote reminders: %s is damaged or of an unknown version (move it away to start without the opt-ins)", f.path)
	}
	for _, u := range doc.Users {
		if !snowflake.Valid(u) {
			return nil, fmt.Errorf("vote reminders: %s holds %q, which is not a Discord id", f.path, u)
		}
		f.users[u] = struct{}{}
	}
	return f, nil
}

// SetReminder writes nothing for an unchanged choice.
func (f *fileReminders) SetReminder(ctx context.Context, userID string, on bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.users[userID]; ok == on {
		return nil
	}
	next := maps.Clone(f.users)
	if on {
		next[userID] = struct{}{}
	} else {
		delete(next, userID)
	}
	if err := writeFileAtomic(f.path, remindersDoc{Version: 1, Users: slices.Sorted(maps.Keys(next))}); err != nil {
		return fmt.Errorf("vote reminders: %w", err)
	}
	f.users = next
	return nil
}

func (f *fileReminders) WantsReminder(_ context.Context, userID string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.users[userID]
	return ok, nil
}

// writeFileAtomic replaces path with v as JSON: a synced temporary file renamed
// over path, and the directory synced so that the rename survives a power cut.
func writeFileAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// remindOptionValue returns the remind option of a /vote, if the user gave it.
func remindOptionValue(data discordgo.ApplicationCommandInteractionData) (on, given bool) {
	for _, o := range data.Options {
		if o != nil && o.Name == remindOption && o.Type == discordgo.ApplicationCommandOptionBoolean {
			b, ok := o.Value.(bool)
			return b, ok
		}
	}
	return false, false
}

// setReminder applies the remind option of a /vote and returns the line that
// tells the user what happened.
func (b *bot) setReminder(ctx context.Context, userID string, on bool) string {
	if b.reminders == nil {
		return "Vote reminders are off on this bot."
	}
	if err := b.reminders.SetReminder(ctx, userID, on); err != nil {
		b.log.Warn("could not save a reminder choice", "user", userID, "error", err)
		return "I could not save your reminder choice; please try again later."
	}
	b.log.Info("reminder choice saved", "user", userID, "remind", on)
	if on {
		return "I will send you a direct message when you can vote again."
	}
	return "I will not remind you to vote."
}

// remind sends the vote reminder to the voter of v, if they asked for one. A
// refusal (a user who takes no DMs: 403) is logged, not retried: no retry
// would mend it. Other failures are returned, so voterewards retries.
func (b *bot) remind(ctx context.Context, v voterewards.Vote) error {
	if b.reminders == nil {
		return nil
	}
	want, err := b.reminders.WantsReminder(ctx, v.PlatformID)
	if err != nil || !want {
		return err
	}
	s := b.shards.Sessions()[0] // REST calls are not tied to a shard
	ch, err := s.UserChannelCreate(v.PlatformID, discordgo.WithContext(ctx))
	if err == nil {
		_, err = s.ChannelMessageSend(ch.ID, fmt.Sprintf("Your Top.gg vote has expired: you can vote again now! https://top.gg/bot/%s/vote\n"+
			"(To stop these reminders, use /vote remind:False.)", b.botID), discordgo.WithContext(ctx))
	}
	if code := restStatus(err); code >= 400 && code < 500 && code != http.StatusTooManyRequests {
		// Refused (429 is waited out by discordgo and the sessions' transport).
		b.log.Info("could not send the vote reminder: Discord refused the direct message", "user", v.PlatformID, "error", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sending the vote reminder: %w", err)
	}
	b.log.Info("vote reminder sent", "user", v.PlatformID)
	return nil
}

// restStatus returns the HTTP status of Discord's answer in err, or 0.
func restStatus(err error) int {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		return 0
	}
	return re.Response.StatusCode
}

// rewards gives the voter role on a vote and takes it back when the vote
// expires (with REWARD_GUILD_ID and REWARD_ROLE_ID; otherwise it only logs).
// The role calls carry the handler's context, which the sessions' transport
// honours, so the shutdown ends a call Discord rate-limits.
type rewards struct {
	bot *bot
	log *slog.Logger
}

func (r *rewards) enabled() bool { return r.bot.cfg.RewardGuildID != "" }

// onVote is idempotent: adding a role the member has is a no-op on Discord.
func (r *rewards) onVote(ctx context.Context, v voterewards.Vote) error {
	if !r.enabled() {
		r.log.Info("vote received", "user", v.PlatformID, "weight", v.Weight, "source", v.Origin.String())
		return nil
	}
	given, err := r.role(ctx, v, true)
	if !given || err != nil {
		return err
	}
	r.log.Info("vote rewarded: role given", "user", v.PlatformID, "weight", v.Weight, "until", v.ExpiresAt, "source", v.Origin.String())
	return nil
}

// role gives (add) or takes back the voter role; done is false for a user
// not in the reward guild (Discord's 404, which no retry mends).
func (r *rewards) role(ctx context.Context, v voterewards.Vote, add bool) (done bool, err error) {
	guild, role := string(r.bot.cfg.RewardGuildID), string(r.bot.cfg.RewardRoleID)
	s, err := r.bot.shardFor(guild)
	if err != nil {
		return false, err
	}
	call, reason := s.GuildMemberRoleRemove, "Top.gg vote expired"
	if add {
		call, reason = s.GuildMemberRoleAdd, "voted on Top.gg"
	}
	err = call(guild, v.PlatformID, role, discordgo.WithContext(ctx), discordgo.WithAuditLogReason(reason))
	if restStatus(err) == http.StatusNotFound {
		if add {
			r.log.Info("vote received from a user outside the reward guild; no role given", "user", v.PlatformID)
		}
		return false, nil
	}
	return err == nil, err
}

// onExpire takes the role back and sends the reminder, unless the user voted
// again since (they keep the role, and cannot vote yet).
func (r *rewards) onExpire(ctx context.Context, v voterewards.Vote) error {
	if st := r.bot.plugin.Active(v.PlatformID); st.Active {
		r.log.Info("vote expired but the user voted again; role kept, no reminder", "user", v.PlatformID)
		return nil
	}
	if !r.enabled() {
		r.log.Info("vote expired", "user", v.PlatformID)
	} else if taken, err := r.role(ctx, v, false); err != nil {
		return err
	} else if taken {
		r.log.Info("vote expired: role taken back", "user", v.PlatformID)
	}
	return r.bot.remind(ctx, v)
}

// shardFor returns the session of guildID's shard, or, for another process's
// shard, any session of this one: REST calls are not tied to a shard.
func (b *bot) shardFor(guildID string) (*discordgo.Session, error) {
	s, err := b.shards.ForGuild(guildID)
	if errors.Is(err, shards.ErrNotHere) {
		return b.shards.Sessions()[0], nil
	}
	return s, err
}

// onInteraction answers /vote from the vote cache, without a request to Top.gg.
func (b *bot) onInteraction(s *discordgo.Session, i *discordgo.InteractionCreate) {
	if i.Type != discordgo.InteractionApplicationCommand || i.ApplicationCommandData().Name != voteCommand.Name {
		return
	}
	user := i.User
	if i.Member != nil {
		user = i.Member.User
	}
	if user == nil {
		return
	}
	msg := fmt.Sprintf("Vote for me on Top.gg: https://top.gg/bot/%s/vote", b.botID)
	switch st := b.plugin.Active(user.ID); {
	case st.Active:
		msg += fmt.Sprintf("\nYour vote is active until <t:%d:t>. Thank you!", st.Until.Unix())
	case st.Covered:
		msg += "\nYou have no active vote right now."
	default:
		msg += "\nI am still reading the vote history; ask again in a minute to see your vote."
	}
	if on, given := remindOptionValue(i.ApplicationCommandData()); given {
		ctx, cancel := context.WithTimeout(context.Background(), interactionSaveTimeout)
		msg += "\n" + b.setReminder(ctx, user.ID, on)
		cancel()
	}
	err := s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: msg, Flags: discordgo.MessageFlagsEphemeral},
	})
	if err != nil {
		b.log.Warn("could not answer /vote", "user", user.ID, "error", err)
		return
	}
	b.log.Info("answered /vote", "user", user.ID)
}
