// Package plugin puts a discordgo bot on its Top.gg listing in one call: it wires
// the module's jobs, [autopost] (server and shard counts), [commands] (slash
// commands published to the listing) and [voterewards] (a reward, and later an
// expiry, for every vote), into the bot's shard sessions and runs them under one
// supervisor.
//
// The whole use, a bot configured from the environment (LoadEnv fills the
// bot's own struct that holds a Config, or a Config alone) whose voters get a
// role until their vote expires:
//
//	func run() error {
//		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//		defer stop()
//		var cfg struct {
//			DiscordToken string        `env:"DISCORD_TOKEN, required"`
//			TopggToken   string        `env:"TOPGG_TOKEN, required"`
//			Topgg        plugin.Config // TOPGG_AUTOPOST, TOPGG_VOTE_POLL_INTERVAL, TOPGG_WEBHOOK_*, ...
//		}
//		if err := plugin.LoadEnv(ctx, &cfg, nil); err != nil {
//			return err // names the variable: "TOPGG_TOKEN: is required but not set"
//		}
//		client, err := topgg.New(cfg.TopggToken)
//		if err != nil {
//			return err
//		}
//		group, err := shards.New(cfg.DiscordToken, 1) // discordgo sessions, one per shard
//		if err != nil {
//			return err
//		}
//		defer group.Close() // after Run returned
//
//		// plugin.Config{} in code is valid too: every zero field means its default.
//		var p *plugin.Plugin // the expiry handler asks it whether the user voted again
//		p, err = plugin.New(client, cfg.Topgg,
//			plugin.WithCommands(myCommands),
//			plugin.WithRewardHandler(func(ctx context.Context, v voterewards.Vote) error {
//				return grantRole(ctx, v.PlatformID) // idempotent on v.Key()
//			}),
//			plugin.WithExpiryHandler(func(ctx context.Context, v voterewards.Vote) error {
//				if p.Active(v.PlatformID).Active {
//					return nil // voted again since: keep the role
//				}
//				return takeRole(ctx, v.PlatformID)
//			}))
//		if err != nil {
//			return err
//		}
//		if err := p.Attach(group.Sessions()...); err != nil { // before the sessions open
//			return err
//		}
//		if err := group.Open(ctx); err != nil {
//			return err
//		}
//		return p.Run(ctx) // until SIGTERM: every job stopped and the vote state saved when it returns
//	}
//
// [Plugin.Run] is the one lifecycle primitive, like every job of the module: a
// failing job is restarted with backoff, so a Top.gg outage never takes the bot
// down. Wiring mistakes are errors, not log lines (see [New], [Plugin.Attach]).
//
// The plugin logs to [log/slog.Default] unless given [WithLogger], so its
// warnings are seen even when the option is forgotten. Command-sync outcomes,
// failures included, also reach [WithCommandSyncHandler].
package plugin
