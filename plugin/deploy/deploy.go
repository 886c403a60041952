// Package deploy opens what a bot's environment ([plugin.Env]) names: its
// state, in PostgreSQL (DATABASE_URL), Redis (REDIS_URL) or a directory
// (TOPGG_STATE_DIR), and with REDIS_URL the fleet that leads; then
// [Deployment.Options] gives them to plugin.New. A bot with a directory alone
// may call boltstate.Open instead and link neither go-redis nor pgx.
package deploy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// Deployment is what [Open] opened: close it after the plugin's Run returned.
type Deployment struct {
	// State is all of the bot's state: PostgreSQL with DATABASE_URL, else Redis
	// with REDIS_URL, else TOPGG_STATE_DIR.
	State voterewards.State
	// Fleet leads with REDIS_URL; nil in one process.
	Fleet *fleet.Fleet
	// Postgres is State with DATABASE_URL, and Pool its connections, for the
	// bot's own tables; both nil without.
	Postgres *pgstore.Store
	Pool     *pgxpool.Pool

	closers []func() error
}

// Check checks what [Open] will open, without a connection (the URLs parse, the
// state directory opens); a refusal is a *topgg.ConfigError naming its variable.
func Check(env plugin.Env) error {
	if env.RedisURL.Reveal() != "" {
		rdb, err := fleet.NewUniversalClient(env.RedisURL.Reveal()) // connects to nothing yet
		if err != nil {
			return &topgg.ConfigError{Variable: "REDIS_URL", Err: err}
		}
		_ = rdb.Close()
	}
	if u := env.DatabaseURL.Reveal(); u != "" {
		if err := pgstore.CheckURL(u); err != nil {
			return &topgg.ConfigError{Variable: "DATABASE_URL", Err: err}
		}
	} else if env.RedisURL.Reveal() == "" && env.Config.KeepsState() {
		st, err := boltstate.Open(env.StateDir)
		if errors.Is(err, boltstate.ErrLocked) {
			return nil // in use by another process, which no value fixes: Open says so
		}
		if err != nil {
			return &topgg.ConfigError{Variable: "TOPGG_STATE_DIR", Err: err}
		}
		return st.Close()
	}
	return nil
}

// Open checks env ([Check]) and opens the state and fleet of the bot whose Discord
// application is appID; one process whose Config keeps no state gets none.
func Open(ctx context.Context, env plugin.Env, appID string, log *slog.Logger) (*Deployment, error) {
	if err := Check(env); err != nil {
		return nil, err
	}
	d := &Deployment{}
	if err := d.open(ctx, env, appID, cmp.Or(log, slog.Default())); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return d, nil
}

func (d *Deployment) open(ctx context.Context, env plugin.Env, appID string, log *slog.Logger) error {
	if env.RedisURL.Reveal() != "" {
		rdb, err := fleet.NewUniversalClient(env.RedisURL.Reveal()) // Check has read it
		if err != nil {
			return err
		}
		d.closers = append(d.closers, rdb.Close)
		if d.Fleet, err = fleet.New(rdb, fleet.Config{Bot: appID, ShardCount: env.ShardCount, LeaseTTL: env.FleetLease, Logger: log}); err != nil {
			return err
		}
		if env.DatabaseURL.Reveal() == "" {
			d.State, err = redisstate.New(rdb, appID)
			return err
		}
	}
	if env.DatabaseURL.Reveal() != "" {
		return d.openPostgres(ctx, env, log)
	}
	if !env.Config.KeepsState() {
		return nil
	}
	st, err := boltstate.Open(env.StateDir) // Check has opened it: locked since, if it fails
	if err != nil {
		return err
	}
	d.State = st
	d.closers = append(d.closers, st.Close)
	return nil
}

// openPostgres opens the state in DATABASE_URL's database; in a fleet no
// transaction outlasts the lease.
func (d *Deployment) openPostgres(ctx context.Context, env plugin.Env, log *slog.Logger) error {
	pool, err := pgstore.Connect(ctx, env.DatabaseURL.Reveal()) // Check has read the URL
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	d.Pool = pool
	d.closers = append(d.closers, func() error { pool.Close(); return nil })
	cfg := pgstore.Config{Logger: log}
	if env.RedisURL.Reveal() != "" {
		cfg.TxTimeout = env.FleetLease
	}
	if d.Postgres, err = pgstore.Open(ctx, pool, cfg); err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	d.State = d.Postgres
	return nil
}

// Options returns the plugin's options for the deployment: state and fleet.
func (d *Deployment) Options() []plugin.Option {
	var opts []plugin.Option
	if d.State != nil {
		opts = append(opts, plugin.WithState(d.State))
	}
	if d.Fleet != nil {
		opts = append(opts, plugin.WithFleet(d.Fleet))
	}
	return opts
}

// Close closes what Open opened, the last opened first.
func (d *Deployment) Close() error {
	var errs []error
	for _, c := range slices.Backward(d.closers) {
		errs = append(errs, c())
	}
	d.closers = nil
	return errors.Join(errs...)
}
