// Package voterperks gives a discordgo bot what every bot with Top.gg votes
// writes by hand: a voter role held while the vote is active, commands only
// voters may use, a direct message when a voter can vote again (opt-in, with
// the way to opt out in every message), and ready /vote and /leaderboard
// commands.
//
// It sits beside the plugin, not in voterewards (which imports no discordgo)
// and not in plugin (a bot that wires voterewards itself uses it too): it
// reads the votes through [Votes] (a *voterewards.Poller, or the plugin) and
// keeps the reminder opt-ins in the bot's voterewards.State, beside its votes
// (a directory, Redis or PostgreSQL). With the plugin, plugin.WithVoterPerks
// wires it all.
//
// In a fleet, the handlers run in the leader only, and check its term
// (fleet.CheckTerm) right before each role call and direct message: a
// leader resumed after a pause past its lease changes nothing.
//
// The handlers [Perks.OnReward] and [Perks.OnExpire] are voterewards
// handlers: at least once per vote, calls of one user never overlapping. Both
// are idempotent: a role given or taken twice is one change on Discord, and a
// reminder already sent for a vote is not sent again. [Perks.Gate] and
// [Perks.Handle] are discordgo interaction handlers; the gate reads the vote
// cache only (no request), so it answers in every process of a fleet.
package voterperks
