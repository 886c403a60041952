// Package plugin puts a discordgo bot on its Top.gg listing in one call: it wires
// the module's jobs, [autopost] (server and shard counts), [commands] (slash
// commands published to the listing) and [voterewards] (a reward, and later an
// expiry, for every vote), into the bot's shard sessions and runs them under one
// supervisor.
//
// The whole use:
//
//	// The settings: every zero field of Config means its default, so Config{}
//	// works; LoadEnv reads the TOPGG_* variables into it (or into a bot's own
//	// struct that embeds a Config). Errors name the variable.
//	var cfg plugin.Config
//	if err := plugin.LoadEnv(ctx, &cfg, nil); err != nil {
//		log.Fatal(err) // e.g. "TOPGG_VOTE_POLL_INTERVAL: is set but empty; ..."
//	}
//	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
//	...
//	var p *plugin.Plugin // the expiry handler asks it whether the user voted again
//	p, err = plugin.New(client, cfg,
//		plugin.WithCommands(myCommands), // else the commands Discord has after READY
//		plugin.WithRewardHandler(func(ctx context.Context, v voterewards.Vote) error {
//			return grantRole(ctx, v.PlatformID) // idempotent on v.Key()
//		}),
//		plugin.WithExpiryHandler(func(ctx context.Context, v voterewards.Vote) error {
//			if p.Active(v.PlatformID).Active {
//				return nil // voted again since: keep the role
//			}
//			return takeRole(ctx, v.PlatformID)
//		}))
//	...
//	// Before the sessions open: READY is where counting and command sync start.
//	if err := p.Attach(sessions...); err != nil { ... }
//
//	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	ran := make(chan error, 1)
//	go func() { ran <- p.Run(ctx) }() // until ctx is done
//	// ... open the sessions; answer commands with p.Active(userID) ...
//	<-ctx.Done()
//	err = <-ran // the jobs stopped, running handlers finished, vote state saved
//	// ... then close the sessions.
//
// [Plugin.Run] is the one lifecycle primitive, like every job of the module: it
// works until its context is done and returns once nothing it started is left. A
// job that fails or panics is logged and restarted with backoff, so a Top.gg
// outage never takes the bot down; a failure no restart mends (the service
// refused the token) ends Run with an error wrapping [ErrJobFailed]. Run may be
// called again after it returned. Wiring mistakes are errors, not log lines:
// Attach after Run or of an open session ([ErrAttachAfterRun], [autopost.ErrSessionOpen]),
// Run without a session while autopost or command sync is on ([autopost.ErrNoSessions]),
// nil arguments ([topgg.ErrNilArgument]), an invalid Config (*[ConfigError]), a
// command definition Discord would refuse ([WithCommands]), and an interval that
// would flood Top.gg ([Config.ValidateFor]: autopost at least every 15 minutes,
// votes polled at most every 10 seconds, except against a fake on this machine).
//
// The plugin logs to [log/slog.Default] unless given [WithLogger], so its
// warnings are seen even when the option is forgotten. Command-sync outcomes,
// failures included, also reach [WithCommandSyncHandler].
package plugin
