// Package voterperks gives a discordgo bot what every bot with Top.gg votes
// writes by hand: a voter role held while the vote is active, commands only
// voters may use, a direct message when a voter can vote again (opt-in, with
// the way to opt out in every message), and ready /vote and /leaderboard
// commands.
//
// It sits beside the plugin, not in voterewards (which imports no discordgo)
// and not in plugin (a bot that wires voterewards itself uses it too): it
// reads the votes through [Votes] and keeps the reminder opt-ins in the bot's
// voterewards.State. With the plugin, plugin.WithVoterPerks wires it all.
//
// [Perks.OnReward] and [Perks.OnExpire] are voterewards handlers, called at
// least once per vote and idempotent: a role given or taken twice is one
// change, and a reminder is sent once per vote. In a fleet they run in the
// leader only, and a leader whose term is over changes nothing.
// [Perks.Gate] and [Perks.Handle] are discordgo interaction handlers; the
// gate reads the vote cache only, so it answers in every process of a fleet.
package voterperks
