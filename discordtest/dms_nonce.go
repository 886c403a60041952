package discordtest

import (
	"bytes"
	"time"
)

// nonceWindow is how long the Server remembers an enforced nonce. Discord
// says "the past few minutes": the fake takes two, so that it never hides a
// repeat Discord would show.
const nonceWindow = 2 * time.Minute

// nonceKey is a nonce sent in one channel (the bot is the only author).
type nonceKey struct{ channel, nonce string }

// sentNonce is the message an enforced nonce created, and when.
type sentNonce struct {
	dm DirectMessage
	at time.Time
}

// repeatLocked returns the message m's enforced nonce created in channel
// within nonceWindow: Discord answers the repeat with it and creates none.
// The caller holds s.mu.
func (d *dmState) repeatLocked(channel string, m *messageBody) (DirectMessage, bool) {
	if !m.EnforceNonce || len(m.Nonce) == 0 {
		return DirectMessage{}, false
	}
	prev, ok := d.nonces[nonceKey{channel, string(bytes.Trim(m.Nonce, `"`))}]
	if !ok || time.Since(prev.at) > nonceWindow {
		return DirectMessage{}, false
	}
	return prev.dm, true
}

// rememberLocked records the enforced nonce of m, which created dm. The
// caller holds s.mu.
func (d *dmState) rememberLocked(m *messageBody, dm DirectMessage) {
	if !m.EnforceNonce || len(m.Nonce) == 0 {
		return
	}
	if d.nonces == nil {
		d.nonces = map[nonceKey]sentNonce{}
	}
	d.nonces[nonceKey{dm.ChannelID, string(bytes.Trim(m.Nonce, `"`))}] = sentNonce{dm: dm, at: time.Now()}
}
