package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/bwmarrin/discordgo"
	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/snowflake"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterewards"
)

// Vote reminders: a user who runs /vote with remind:True gets a direct message
// when their vote expires, that is when they can vote again. The reminder is
// sent by the expiry handler, which voterewards calls once per delivered vote
// and records, so a restart sends no reminder twice (a crash between the DM
// and that record may: at least once, like every handler). The opt-in is kept
// in the state directory, so it survives restarts.

// remindOption is the /vote option by which a user turns reminders on or off.
const remindOption = "remind"

// remindersFile is the opt-in file in TOPGG_STATE_DIR.
const remindersFile = "reminders.json"

// reminderStore keeps which users want a reminder when their vote expires.
// One process keeps it in a file; a fleet in a Redis set that every
// process shares. Implementations are safe for concurrent use.
type reminderStore interface {
	// SetReminder records that userID wants (on) or no longer wants reminders;
	// it returns once the choice is durable.
	SetReminder(ctx context.Context, userID string, on bool) error
	// WantsReminder reports whether userID asked for reminders.
	WantsReminder(ctx context.Context, userID string) (bool, error)
}

// openReminderStore returns where the /vote remind opt-ins live: in a fleet
// (rdb not nil), a Redis set every process shares (the interaction may reach
// any process, the expiry only the leader); else a file in the state
// directory. Nil when vote polling, and so expiry, is off.
func openReminderStore(cfg config, rdb redis.UniversalClient, appID string) (reminderStore, error) {
	if cfg.Plugin.VotePollInterval != nil && *cfg.Plugin.VotePollInterval == 0 {
		return nil, nil
	}
	if rdb != nil {
		return fleetReminders{rdb: rdb, key: fleet.Key(appID, "set:reminders")}, nil
	}
	return openReminders(cmp.Or(cfg.Plugin.StateDir, plugin.DefaultStateDir))
}

// fleetReminders is a reminderStore in a Redis set shared by the fleet, in
// the bot's key space. Its writes are not fenced: any process records the
// opt-in of the interaction it got.
type fleetReminders struct {
	rdb redis.UniversalClient
	key string
}

// SetReminder implements reminderStore.
func (f fleetReminders) SetReminder(ctx context.Context, userID string, on bool) error {
	var err error
	if on {
		err = f.rdb.SAdd(ctx, f.key, userID).Err()
	} else {
		err = f.rdb.SRem(ctx, f.key, userID).Err()
	}
	if err != nil {
		return fmt.Errorf("vote reminders: %w", err)
	}
	return nil
}

// WantsReminder implements reminderStore.
func (f fleetReminders) WantsReminder(ctx context.Context, userID string) (bool, error) {
	ok, err := f.rdb.SIsMember(ctx, f.key, userID).Result()
	if err != nil {
		return false, fmt.Errorf("vote reminders: %w", err)
	}
	return ok, nil
}

// fileReminders is a reminderStore in one JSON file, rewritten whole and
// atomically (a new file, synced, then renamed over the old one, and the
// directory synced) on each change: a crash leaves the old set or the new
// one, never a torn file. The set stays in memory between changes. One file
// write per opt-in is fine for the few users who use /vote at a time; the
// file is a few bytes per user.
type fileReminders struct {
	path string

	mu    sync.Mutex // held across a write: writes are serialised
	users map[string]struct{}
}

var _ reminderStore = (*fileReminders)(nil)

// remindersDoc is the file's content.
type remindersDoc struct {
	Version int      `json:"version"`
	Users   []string `json:"users"`
}

// openReminders reads the opt-ins kept in dir (none if the file does not
// exist yet). A file it cannot read is an error naming it: the bot does not
// start with the opt-ins silently forgotten.
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

// SetReminder implements reminderStore. An unchanged choice writes nothing.
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

// WantsReminder implements reminderStore.
func (f *fileReminders) WantsReminder(_ context.Context, userID string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.users[userID]
	return ok, nil
}

// writeFileAtomic replaces path with v as JSON: a temporary file in the same
// directory, synced, renamed over path, then the directory synced so that the
// rename itself survives a power cut.
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

// remind sends the vote reminder to the voter of v, if they asked for one.
// A user who does not accept the bot's DMs (Discord answers 403) or any other
// refusal of the request is logged and not retried: no retry would mend it.
// Other failures (5xx, the network) are returned, so voterewards retries.
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
		_, err = s.ChannelMessageSend(ch.ID, reminderText(b.botID), discordgo.WithContext(ctx))
	}
	if refused(err) {
		b.log.Info("could not send the vote reminder: Discord refused the direct message", "user", v.PlatformID, "error", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sending the vote reminder: %w", err)
	}
	b.log.Info("vote reminder sent", "user", v.PlatformID)
	return nil
}

// reminderText is the reminder's message.
func reminderText(botID string) string {
	return fmt.Sprintf("Your Top.gg vote has expired: you can vote again now! https://top.gg/bot/%s/vote\n"+
		"(To stop these reminders, use /vote remind:False.)", botID)
}

// refused reports a 4xx answer other than 429 (which discordgo and the
// sessions' transport wait out): the request itself is refused, and
// repeating it would get the same answer.
func refused(err error) bool {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		return false
	}
	code := re.Response.StatusCode
	return code >= 400 && code < 500 && code != http.StatusTooManyRequests
}
