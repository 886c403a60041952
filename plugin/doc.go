// Package plugin puts a discordgo bot on its Top.gg listing in one call: it wires
// the module's jobs, [autopost] (server and shard counts), [commands] (slash
// commands published to the listing) and [voterewards] (a reward, and later an
// expiry, for every vote), and the voter features of [voterperks], into the
// bot's shard sessions, and runs them under one supervisor.
//
// The whole use, a bot in one process configured from the environment ([Env],
// [LoadEnv]), its state in a directory, is example-bot/minimal's run (the
// README's first bot): LoadEnv, [Env.Client], [Env.Shards], boltstate.Open,
// [New] with [WithState], [Plugin.Attach] before the sessions open,
// [Plugin.RegisterCommands], then the shard group's Serve of [Plugin.Run].
//
// # State x Leader
//
// What varies is two values. The state ([WithState], a voterewards.State) holds
// all the plugin keeps: votes and ledger, the last published command hash and
// the reminder opt-ins, in a directory (boltstate), Redis (redisstate) or
// PostgreSQL (pgstore); package plugin/deploy opens the one the environment
// names. The leader is this process, always, or with [WithFleet] the holder
// of a fleet's lease. [New] hands the leader's fence to the state, so a shared
// state's leader writes are refused once a newer term began.
//
// A fleet leader's term, a deadline in the leader's context, is checked right
// before every leader-only action of the jobs (see package fleet); outside a
// fleet every check passes.
//
// [Plugin.Run] is the one lifecycle primitive, like every job of the module: a
// failing job is restarted with backoff, so a Top.gg outage never takes the bot
// down. Wiring mistakes are errors, not log lines (see [New], [Plugin.Attach]).
// The plugin logs to [log/slog.Default] unless given [WithLogger].
package plugin
