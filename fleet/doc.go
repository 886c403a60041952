// Package fleet runs one bot as many processes, on one or many machines,
// through a shared Redis (github.com/redis/go-redis/v9): one leader at a time
// for the leader-only jobs, and the exact server count of all shards.
//
// # Leadership
//
// A [Fleet]'s [Lease] elects one leader per bot, each term with a fencing
// token larger than every earlier one; [Lease.Run] runs the leader's work
// with a context that ends before the lease can expire. A stale leader
// (paused past its lease) cannot write shared state: see [Fence]. Run Redis
// with AOF (or RDB) persistence, so that the token counter outlives a restart.
//
// The fence guards Redis, not what a leader does elsewhere (a request to
// Top.gg or Discord, a reward handler's call). So each term has a deadline,
// the send time of the last successful renewal plus TTL minus TTL/5, carried
// in the leader's context and checked on the local monotonic clock right
// before every leader-only action of the plugin's jobs ([CheckTerm]). A
// leader resumed after a pause past its deadline starts nothing; what is left
// is the time between a check and the send it guards (BENCHMARKS.md).
//
// # Redis Cluster and Sentinel
//
// [Open] selects the deployment by the URL's scheme (see
// [NewUniversalClient]); [New] takes a client the caller built: a
// *redis.Client (Sentinel's failover client included) or a
// *redis.ClusterClient (with a ClusterStateReloadInterval of a few seconds or
// less: a dead master sends no MOVED reply). All of a bot's keys share one
// hash slot, so on a cluster one master serves the bot.
//
// Replication is asynchronous, so a failover can lose the last writes the
// old master acknowledged. For the lease this is closed in two ways: an
// election or a renewal counts only once every connected replica has
// acknowledged it (WAIT), and a token is at least Redis's clock in
// milliseconds, so a replica cut off when a token was drawn, promoted only
// after the failover's detection time, draws a larger one unless the
// machines' clocks differ by more than that. Tokens therefore never repeat
// and never go backwards across a failover (Redis's min-replicas-to-write
// closes the cut-off case without clocks, refusing writes while no replica
// is connected). Other writes are not waited for (see package redisstate).
//
// # Counts
//
// [Fleet.Counts] keeps every shard's guild count in Redis, stamped with
// Redis's clock so machines' clocks do not matter. A total with missing
// shards (never reported, or silent for an hour) is never posted. Limits: a
// shard's guild count below 2^32, report times before 2106.
//
// # Votes, commands and faults
//
// fleet keeps no state: a bot's votes, command hash and opt-ins are a
// voterewards.State (package redisstate or pgstore), whose leader writes the
// plugin fences with the lease's token. Give the fleet to plugin.WithFleet;
// close it after the plugin's Run returned. Redis errors never panic and
// never end a Run: the counts return them, the lease logs and retries them,
// its leader work pausing while the lease cannot be renewed in time. No
// error, log line or type of this package shows a Redis password.
package fleet
