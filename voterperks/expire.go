package voterperks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/voterewards"
)

// OnExpire is the expiry handler (leader only): unless the user voted again, it
// takes the role back and sends an opted-in user the reminder, once per vote.
// Closed DMs are skipped; other failures are returned, for voterewards to retry.
func (p *Perks) OnExpire(ctx context.Context, v voterewards.Vote) error {
	user := v.PlatformID
	if user == "" {
		return nil
	}
	if st := p.votes.Active(user); st.Active {
		p.log.Debug("vote expired but the user voted again; role kept, no reminder", "user", user, "key", v.Key())
		return nil
	}
	if err := p.takeRole(ctx, user); err != nil {
		return err
	}
	return p.remind(ctx, v)
}

// remind sends v's reminder to its voter if they want one and were not
// reminded of v yet, then records it.
func (p *Perks) remind(ctx context.Context, v voterewards.Vote) error {
	if !p.cfg.Reminders {
		return nil
	}
	user, key := v.PlatformID, v.Key()
	on, last, err := p.cfg.State.Reminder(ctx, user)
	if err != nil {
		return fmt.Errorf("voterperks: reading the reminder choice: %w: %w", voterewards.ErrStoreFailed, err)
	}
	if !on || last == key {
		return nil
	}
	sent, err := p.sendReminder(ctx, v)
	if err != nil {
		return err
	}
	if err := p.cfg.State.Reminded(ctx, user, key); err != nil { // held by voterewards: no new expiry starts
		return fmt.Errorf("voterperks: recording the reminder: %w: %w", voterewards.ErrStoreFailed, err)
	}
	if sent {
		p.log.Debug("vote reminder sent", "user", user, "key", key)
	}
	return nil
}

// sendOnce sends a message Discord creates once however often it is sent
// within minutes (an enforced nonce derived from key), so a new leader may
// resend harmlessly. discordgo's MessageSend has no nonce.
func sendOnce(ctx context.Context, s *discordgo.Session, channelID, content, key string) error {
	sum := sha256.Sum256([]byte(key))
	body := struct {
		Content      string `json:"content"`
		Nonce        string `json:"nonce"`
		EnforceNonce bool   `json:"enforce_nonce"`
	}{content, hex.EncodeToString(sum[:])[:maxNonce], true}
	endpoint := discordgo.EndpointChannelMessages(channelID)
	if err := clock.CheckTerm(ctx); err != nil { // a fleet leader past its term sends nothing: the next one does
		return err
	}
	_, err := s.RequestWithBucketID(http.MethodPost, endpoint, body, endpoint, leaderCall(ctx)...)
	return err
}

// maxNonce is the longest nonce Discord takes (25 characters).
const maxNonce = 25

// sendReminder sends the direct message. sent is false, with a nil error,
// when Discord refused it for good: DMs closed, or a 4xx other than 429.
func (p *Perks) sendReminder(ctx context.Context, v voterewards.Vote) (sent bool, err error) {
	s, err := p.session()
	if err != nil {
		return false, err
	}
	user := v.PlatformID
	info := p.info(user)
	info.Vote = v
	text := p.text(ctx, "Reminder", func() string { return p.texts.Reminder(info) }, func() string { return defaultReminder(info) }) +
		"\n" + p.texts.ReminderStop
	if err := p.limited("dm"); err != nil {
		return false, fmt.Errorf("voterperks: sending the vote reminder: %w", err)
	}
	ch, err := s.UserChannelCreate(user, leaderCall(ctx)...)
	if err == nil {
		err = sendOnce(ctx, s, ch.ID, text, v.Key())
	}
	p.noteLimit("dm", err)
	code, status := restCode(err)
	err = discord.Scrub(s, err)
	switch {
	case err == nil:
		return true, nil
	case code == discordgo.ErrCodeCannotSendMessagesToThisUser:
		p.log.Info("could not send the vote reminder: Discord refused the direct message", "user", user, "key", v.Key(), "reason", "direct messages closed (50007)")
		return false, nil
	case status >= 400 && status < 500 && status != http.StatusTooManyRequests:
		p.log.Warn("could not send the vote reminder: Discord refused the direct message", "user", user, "key", v.Key(), "error", err)
		return false, nil
	}
	return false, fmt.Errorf("voterperks: sending the vote reminder: %w", err)
}
