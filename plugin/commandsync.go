package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

// commandResync is how often commands read from Discord are compared with the
// listing again. A bot often registers its commands in its own READY handler, so the
// first read may come too early; an unchanged list costs one Discord GET and no PUT.
const commandResync = 15 * time.Minute

// TODO(lead): once commands has its own Run job with a failure callback (issue 8,
// commands helper), run it here instead of this loop, passing CommandSyncHandler
// as its callback.

// syncCommands waits for the first READY, then publishes the commands given with
// [WithCommands] once, or, without them, the application's commands read from
// Discord, again every commandResync. Every attempt is reported to the
// [CommandSyncHandler]. Definitions the service refuses end the job (sending them
// again will not help; the rest of the plugin runs on); a refused token is
// returned, for the supervisor to stop the plugin; any other failure is returned
// to be retried with backoff.
func (p *Plugin) syncCommands(ctx context.Context) error {
	var s *discordgo.Session
	select {
	case <-ctx.Done():
		return nil
	case s = <-p.firstReady:
		// Put it back so that a restarted sync (or the next Run) finds it too.
		p.firstReady <- s
	}
	for {
		var r commands.Result
		var err error
		if p.opts.haveCmds {
			r, err = p.syncer.Sync(ctx, p.opts.commands)
		} else {
			r, err = p.syncer.SyncFromDiscord(ctx, s)
		}
		if ctx.Err() != nil {
			return nil // a stop, not a failure to report
		}
		p.callOnSync(ctx, r, err)
		switch {
		case err == nil:
		case permanent(err) && !errors.Is(err, topgg.ErrUnauthorized):
			p.log.Error("Top.gg refused the slash commands; not retrying until the next Run", "error", err)
			return nil
		default:
			return fmt.Errorf("command sync: %w", err)
		}
		if p.opts.haveCmds {
			return nil
		}
		if clock.Sleep(ctx, p.opts.clock, commandResync) != nil {
			return nil
		}
	}
}
