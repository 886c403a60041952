// Package commands publishes a discordgo bot's slash commands to its Top.gg
// listing (PUT /v1/projects/@me/commands).
//
// A [Syncer] checks the bot's []*discordgo.ApplicationCommand against
// Discord's rules ([Validate]), turns them into a canonical form
// ([Normalize]) and sends them only when they differ from the last successful
// sync, whose fingerprint lives in a [HashStore] (in memory, or the bot's
// state). [Syncer.Run] runs it as a long-running job, and may read the
// commands from Discord. Only a Discord bot project has commands; for any
// other the Syncer sends nothing and says so in one log line.
package commands
