// Package commands publishes a discordgo bot's slash commands to its Top.gg
// listing (PUT /v1/projects/@me/commands).
//
// A [Syncer] takes the []*discordgo.ApplicationCommand the bot registers on
// Discord ([Syncer.Sync]; a [Job] given a Session and no Commands fetches
// the application's global commands from Discord), turns them into a
// canonical form with [Normalize], and sends them only when they differ
// from the last successful sync. The fingerprint of the last sync lives in a
// [HashStore]: in memory by default, or in a file ([NewFileHashStore]) so that
// a restart does not publish unchanged commands again.
//
// The definitions are checked against Discord's rules ([Validate]) before
// anything is sent. A [Job] runs the sync as a long-running job.
//
// Only a Discord bot project has commands. For any other project the Syncer
// sends nothing and says so in one log line.
package commands
