package voterperks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/voterewards"
)

// VoteInfo is what /vote's answer says: the user's vote and ledger.
type VoteInfo struct {
	UserID  string
	VoteURL string
	// Status is the cache's answer (Covered false while it reads the history).
	Status voterewards.Status
	// Stats is the user's ledger; StatsErr is set when it could not be read.
	Stats    voterewards.Stats
	StatsErr error
	Now      time.Time
}

// GateInfo is what a gated command answers a user without an active vote.
type GateInfo struct {
	UserID  string
	VoteURL string
	Status  voterewards.Status
	Now     time.Time
}

// ReminderInfo is what a reminder says: the vote that expired.
type ReminderInfo struct {
	UserID  string
	VoteURL string
	Vote    voterewards.Vote
}

// LeaderboardInfo is what /leaderboard answers: this month's top voters.
type LeaderboardInfo struct {
	Month     time.Time // the first instant of the UTC month
	Standings []voterewards.Standing
	Err       error // set when the ledger could not be read
}

// Texts is what the perks say; each nil func or empty string keeps its
// default ([DefaultTexts]). Command descriptions must pass commands.Validate.
// A func that panics, or answers an interaction too late, gives way to its
// default (an error's answer; VoteExtra to none), logged.
type Texts struct {
	// Vote is /vote's answer.
	Vote func(VoteInfo) string
	// VoteExtra, if set, adds a line to /vote's answer (a bot's own points,
	// say); ctx ends before Discord's deadline. It has no default.
	VoteExtra func(ctx context.Context, v VoteInfo) string
	// RemindOn, RemindOff, RemindFailed and RemindersOff end /vote's answer
	// when the user gave the remind option: saved on, saved off, not saved,
	// reminders off on this bot.
	RemindOn, RemindOff, RemindFailed, RemindersOff string
	// Gate answers a gated command used without an active vote.
	Gate func(GateInfo) string
	// Reminder is the direct message sent when a vote expires.
	Reminder func(ReminderInfo) string
	// ReminderStop ends every reminder: how to stop them. It cannot be off.
	ReminderStop string
	// Leaderboard is /leaderboard's answer.
	Leaderboard func(LeaderboardInfo) string
	// VoteDescription, RemindDescription and LeaderboardDescription are the
	// commands' descriptions, as [Commands] defines them.
	VoteDescription, RemindDescription, LeaderboardDescription string
}

// DefaultTexts returns the perks' English texts.
func DefaultTexts() Texts {
	return Texts{
		Vote:                   defaultVote,
		RemindOn:               "I will send you a direct message when you can vote again.",
		RemindOff:              "I will not remind you to vote.",
		RemindFailed:           "I could not save your reminder choice; please try again later.",
		RemindersOff:           "Vote reminders are off on this bot.",
		Gate:                   defaultGate,
		Reminder:               defaultReminder,
		ReminderStop:           "(To stop these reminders, use /" + VoteCommand + " " + RemindOption + ":False.)",
		Leaderboard:            defaultLeaderboard,
		VoteDescription:        "Get the link to vote for this bot on Top.gg, and see whether your vote is active",
		RemindDescription:      "DM me when I can vote again (True), or stop these reminders (False)",
		LeaderboardDescription: "This month's top voters on Top.gg",
	}
}

// withDefaults fills t's empty fields from DefaultTexts.
func (t Texts) withDefaults() Texts {
	d := DefaultTexts()
	or := func(s *string, def string) {
		if *s == "" {
			*s = def
		}
	}
	for _, f := range []struct {
		s   *string
		def string
	}{
		{&t.RemindOn, d.RemindOn}, {&t.RemindOff, d.RemindOff}, {&t.RemindFailed, d.RemindFailed},
		{&t.RemindersOff, d.RemindersOff}, {&t.ReminderStop, d.ReminderStop}, {&t.VoteDescription, d.VoteDescription},
		{&t.RemindDescription, d.RemindDescription}, {&t.LeaderboardDescription, d.LeaderboardDescription},
	} {
		or(f.s, f.def)
	}
	if t.Vote == nil {
		t.Vote = d.Vote
	}
	if t.Gate == nil {
		t.Gate = d.Gate
	}
	if t.Reminder == nil {
		t.Reminder = d.Reminder
	}
	if t.Leaderboard == nil {
		t.Leaderboard = d.Leaderboard
	}
	return t
}

func defaultVote(v VoteInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Vote for me on Top.gg: %s", v.VoteURL)
	switch st := v.Status; {
	case st.Active:
		fmt.Fprintf(&b, "\nYour vote is active until <t:%d:t>: you can vote again <t:%d:R>. Thank you!", st.Until.Unix(), st.Until.Unix())
	case st.Covered:
		b.WriteString("\nYou have no active vote right now: you can vote now.")
	default:
		b.WriteString("\nI am still reading the vote history; ask again in a minute to see your vote.")
	}
	if v.StatsErr == nil && v.Stats.Votes > 0 {
		month, _ := v.Stats.ThisMonth(v.Now)
		fmt.Fprintf(&b, "\nStreak: %d · votes this month: %d · all time: %d", v.Stats.CurrentStreak(v.Now), month, v.Stats.Votes)
	}
	return b.String()
}

func defaultGate(g GateInfo) string {
	if !g.Status.Covered {
		return "This command is for voters. I am still reading the vote history: if you voted, ask again in a minute; " +
			"else vote for me on Top.gg: " + g.VoteURL
	}
	return "This command is for voters: you can vote now on Top.gg, then use it again: " + g.VoteURL
}

func defaultReminder(r ReminderInfo) string {
	return "Your Top.gg vote has expired: you can vote again now! " + r.VoteURL
}

func defaultLeaderboard(l LeaderboardInfo) string {
	title := "Top voters of " + l.Month.Format("January 2006")
	switch {
	case l.Err != nil:
		return "I could not read the leaderboard; please try again later."
	case len(l.Standings) == 0:
		return title + ": no votes yet this month. Be the first!"
	}
	var b strings.Builder
	b.WriteString(title + ":")
	for i, s := range l.Standings {
		fmt.Fprintf(&b, "\n%d. <@%s>: %d vote", i+1, s.UserID, s.Votes)
		if s.Votes != 1 {
			b.WriteByte('s')
		}
		if s.Total != s.Votes {
			fmt.Fprintf(&b, " (%d with weekend votes counted twice)", s.Total)
		}
	}
	return b.String()
}
