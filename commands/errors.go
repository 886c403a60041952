package commands

import "errors"

// Errors of the package, for errors.Is; the errors returned wrap them.
var (
	errNotReady = errors.New("commands: discordgo session is not ready (no READY received)")
	// errDiscordFetch marks a failure to read the commands from Discord.
	errDiscordFetch = errors.New("commands: fetching the application's commands from Discord")
	// ErrRefused means the service refused these definitions before, for good;
	// they are not sent again. The error also wraps the service's refusal.
	ErrRefused = errors.New("commands: the service refused these definitions before; not sent again")
)
