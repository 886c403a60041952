// Package fleet runs one bot as many processes, on one or many machines,
// through a shared Redis (github.com/redis/go-redis/v9): one leader at a time
// for the leader-only jobs, and the exact server count of all shards.
//
// # Leadership
//
// [Lease] elects one leader per bot, each term with a fencing token larger
// than every earlier one; [Lease.Run] runs the leader's work with a context
// that ends before the lease can expire. A stale leader (paused past its
// lease) cannot write shared state: see [Fence]. Run Redis with AOF (or RDB)
// persistence, so that the token counter outlives a restart.
//
// # The leader's term, and the window left
//
// The fence guards Redis, not what a leader does elsewhere (a request to
// Top.gg or Discord, a reward handler's call). So each term has a deadline,
// the send time of the last successful renewal plus TTL minus TTL/5, and
// every leader-only action of the plugin's jobs checks it on the local
// monotonic clock right before it starts ([CheckTerm]). The term travels in
// the leader's context, because those packages know nothing of fleets;
// outside a fleet the context carries none. A leader resumed after a pause
// past its deadline starts nothing: its first check fails and ends the term.
// What is left is the time between a check and the send it guards (figures in
// BENCHMARKS.md): a pause exactly there still lets that one action out.
// TTL/5 is the margin for that window, for clock-rate differences with Redis,
// and for the new leader, which cannot win before the old lease expires.
//
// # Redis Cluster and Sentinel
//
// [Open] selects the deployment by the URL's scheme: redis:// or rediss://
// for one node, redis+cluster:// for Redis Cluster, redis+sentinel:// for a
// master found through Sentinel (see [NewUniversalClient]). [New] takes a
// client the caller built: a *redis.Client (Sentinel's failover client
// included) or a *redis.ClusterClient (give it a ClusterStateReloadInterval
// of a few seconds or less: a dead master sends no MOVED reply). All of a
// bot's keys share one hash slot, so on a cluster one master serves the bot.
//
// Replication is asynchronous, so a failover can lose the last writes the
// old master acknowledged. For the lease this is closed in two ways:
//   - An election or a renewal counts only once every replica connected to
//     the master has acknowledged it (WAIT); an election that is not is given
//     back, its token never used, and a renewal that is not does not move the
//     leader's deadline.
//   - A token is at least Redis's clock in milliseconds. A replica cut off
//     when a token was drawn is promoted only after the failover's detection
//     time (a second or more), so its next token is above the lost one unless
//     the machines' clocks differ by more than that.
//
// Tokens therefore never repeat and never go backwards across a failover,
// and a stale leader's fenced writes are refused on the promoted replica.
// Redis's min-replicas-to-write closes the cut-off case without relying on
// clocks, at the cost of refusing writes while no replica is connected.
// Other writes are not waited for: a failover can undo those the promoted
// replica had not received (see package redisstate for votes).
//
// # Counts
//
// [Fleet.Counts] keeps every shard's guild count in Redis, stamped with
// Redis's clock so machines' clocks do not matter. A total with missing
// shards (never reported, or silent for an hour) is never posted. Hard limits:
// a shard's guild count below 2^32 and report times before 2106.
//
// # Votes and commands
//
// fleet keeps no state: a bot's votes, command hash and opt-ins are a
// voterewards.State (package redisstate or pgstore), whose leader writes the
// plugin fences with the lease's token (State.UseFence). Open the fleet
// ([Open] or [New]) and give it to plugin.WithFleet; close it after the
// plugin's Run returned.
//
// # Faults
//
// Redis errors never panic and never end a Run: they are returned by the
// counts, and logged and retried by the lease, whose leader work pauses while
// the lease cannot be renewed in time. [NewUniversalClient] and [Open] never
// show the password: not in errors, and no type of this package holds it.
// One Redis node carries a bot (one hash slot); scale figures are in
// BENCHMARKS.md.
package fleet
