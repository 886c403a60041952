package voterperks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/voterewards"
)

// VoteInfo is what a text says of a user: the vote link, and their vote as
// the cache knows it; for /vote also their ledger, for a reminder the vote that expired.
type VoteInfo struct {
	UserID  string
	VoteURL string
	// Status is the cache's answer (Covered false while it reads the history).
	Status voterewards.Status
	// Stats is the user's ledger (/vote); StatsErr is set when it could not be read.
	Stats    voterewards.Stats
	StatsErr error
	// Vote is the vote that expired (Reminder).
	Vote voterewards.Vote
	Now  time.Time
}

// Texts is what the perks say; each nil func or empty string keeps its
// default. Command descriptions must pass commands.Validate. A func that
// panics, or answers an interaction too late, gives way to its default (an
// error's answer; VoteExtra to none), logged.
type Texts struct {
	// Vote is /vote's answer.
	Vote func(VoteInfo) string
	// VoteExtra, if set, adds a line to /vote's answer (a bot's own points,
	// say); ctx ends before Discord's deadline. It has no default.
	VoteExtra func(ctx context.Context, v VoteInfo) string
	// Remind ends /vote's answer when the user gave the remind option: err is
	// nil once the choice on is saved, [ErrRemindersOff] on a bot without
	// reminders, else why it was not saved.
	Remind func(on bool, err error) string
	// Gate answers a gated command used without an active vote.
	Gate func(VoteInfo) string
	// Reminder is the direct message sent when a vote expires.
	Reminder func(VoteInfo) string
	// ReminderStop ends every reminder: how to stop them. It cannot be off.
	ReminderStop string
	// Leaderboard is /leaderboard's answer: the top voters of month (its first
	// instant, UTC), or err when the ledger could not be read.
	Leaderboard func(month time.Time, top []voterewards.Standing, err error) string
	// VoteDescription, RemindDescription and LeaderboardDescription are the
	// commands' descriptions, as [Commands] defines them.
	VoteDescription, RemindDescription, LeaderboardDescription string
}

// withDefaults fills t's empty fields with the English defaults.
func (t Texts) withDefaults() Texts {
	t.ReminderStop = cmp.Or(t.ReminderStop, "(To stop these reminders, use /"+VoteCommand+" "+RemindOption+":False.)")
	t.VoteDescription = cmp.Or(t.VoteDescription, "Get the link to vote for this bot on Top.gg, and see whether your vote is active")
	t.RemindDescription = cmp.Or(t.RemindDescription, "DM me when I can vote again (True), or stop these reminders (False)")
	t.LeaderboardDescription = cmp.Or(t.LeaderboardDescription, "This month's top voters on Top.gg")
	if t.Vote == nil {
		t.Vote = defaultVote
	}
	if t.Remind == nil {
		t.Remind = defaultRemind
	}
	if t.Gate == nil {
		t.Gate = defaultGate
	}
	if t.Reminder == nil {
		t.Reminder = defaultReminder
	}
	if t.Leaderboard == nil {
		t.Leaderboard = defaultLeaderboard
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

func defaultRemind(on bool, err error) string {
	switch {
	case errors.Is(err, ErrRemindersOff):
		return "Vote reminders are off on this bot."
	case err != nil:
		return "I could not save your reminder choice; please try again later."
	case on:
		return "I will send you a direct message when you can vote again."
	}
	return "I will not remind you to vote."
}

func defaultGate(g VoteInfo) string {
	if !g.Status.Covered {
		return "This command is for voters. I am still reading the vote history: if you voted, ask again in a minute; " +
			"else vote for me on Top.gg: " + g.VoteURL
	}
	return "This command is for voters: you can vote now on Top.gg, then use it again: " + g.VoteURL
}

func defaultReminder(r VoteInfo) string {
	return "Your Top.gg vote has expired: you can vote again now! " + r.VoteURL
}

func defaultLeaderboard(month time.Time, top []voterewards.Standing, err error) string {
	title := "Top voters of " + month.Format("January 2006")
	switch {
	case err != nil:
		return "I could not read the leaderboard; please try again later."
	case len(top) == 0:
		return title + ": no votes yet this month. Be the first!"
	}
	var b strings.Builder
	b.WriteString(title + ":")
	for i, s := range top {
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

// text returns what the bot's text function f says, or fallback's text when
// f panics (logged with its stack) or has not answered when ctx ends: an
// interaction's answer keeps Discord's deadline whatever f does. A f that
// ignores ctx runs on alone; its late answer is dropped.
func (p *Perks) text(ctx context.Context, name string, f, fallback func() string) string {
	if ctx.Err() != nil {
		return fallback()
	}
	got := make(chan string, 1)
	go func() {
		var s string
		if rec := panics.Try(func() { s = f() }); rec != nil {
			p.log.Error("a text function panicked; answered without it", slog.String("text", name),
				slog.Any("panic", rec.Value), slog.String("stack", string(rec.Stack)))
			s = fallback()
		}
		got <- s
	}()
	select {
	case s := <-got:
		return s
	case <-ctx.Done():
		p.log.Warn("a text function did not answer in time (does it honour ctx?); answered without it", slog.String("text", name))
		return fallback()
	}
}
