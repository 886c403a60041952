// Package plugin puts a discordgo bot on its Top.gg listing in one call: it wires
// the module's jobs, [autopost] (server and shard counts), [commands] (slash
// commands published to the listing) and [voterewards] (a reward, and later an
// expiry, for every vote), and the voter features of [voterperks], into the
// bot's shard sessions, and runs them under one supervisor.
//
// The whole use, a bot in one process configured from the environment ([Env],
// [LoadEnv]), its state in a directory:
//
//	func run(ctx context.Context) error {
//		var env plugin.Env // DISCORD_TOKEN, TOPGG_TOKEN, SHARD_COUNT, TOPGG_STATE_DIR, TOPGG_*, ...
//		if err := plugin.LoadEnv(ctx, &env, nil); err != nil {
//			return err // names the variable: "TOPGG_TOKEN: is required but not set"
//		}
//		client, err := env.Client()
//		if err != nil {
//			return err
//		}
//		group, err := env.Shards() // one discordgo session per shard
//		if err != nil {
//			return err
//		}
//		state, err := boltstate.Open(env.StateDir) // votes, ledger, command hash, reminder opt-ins
//		if err != nil {
//			return err
//		}
//		defer state.Close() // after Run returned
//		app, err := group.Application(ctx)
//		if err != nil {
//			return err
//		}
//		p, err := plugin.New(client, env.Config, plugin.WithState(state),
//			plugin.WithCommands([]*discordgo.ApplicationCommand{}), // the bot's own, beside /vote and /leaderboard
//			plugin.WithRewardHandler(func(ctx context.Context, v voterewards.Vote) error {
//				log.Printf("%s voted", v.PlatformID) // idempotent on v.Key(): at least once
//				return nil
//			}),
//			plugin.WithVoterPerks(plugin.VoterPerks{BotID: app.ID, Reminders: true}))
//		if err != nil {
//			return err
//		}
//		for _, s := range group.Sessions() {
//			s.StateEnabled = false // nothing here reads discordgo's State, which holds every guild
//		}
//		if err := p.Attach(group.Sessions()...); err != nil { // before the sessions open
//			return err
//		}
//		if err := p.RegisterCommands(ctx, app.ID); err != nil { // on Discord, as on Top.gg
//			return err
//		}
//		return group.Serve(ctx, p.Run, shards.Shutdown{}) // until SIGTERM: the jobs stop, then the shards
//	}
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
// A fleet leader's term is a deadline on the local monotonic clock, checked
// right before every leader-only action: each Top.gg request and redirect
// (topgg), each post (autopost), each command read and publish (commands), each
// vote poll and handler call (voterewards), each role change and reminder
// (voterperks), each Discord rate-limit wait (shards). It travels in the
// leader's context (fleet.CheckTerm reads it) because those packages know
// nothing of fleets and the actions sit several calls deep; outside a fleet
// the context carries none and every check passes.
//
// [Plugin.Run] is the one lifecycle primitive, like every job of the module: a
// failing job is restarted with backoff, so a Top.gg outage never takes the bot
// down. Wiring mistakes are errors, not log lines (see [New], [Plugin.Attach]).
// The plugin logs to [log/slog.Default] unless given [WithLogger].
package plugin
