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
// The fence guards Redis, not what a leader does elsewhere: a request to
// Top.gg, a reward or expiry handler's call, a message to Discord. So each
// term has a deadline, the send time of the last successful renewal plus TTL
// minus TTL/5 (moved on each renewal), and every leader-only action checks
// it on the local monotonic clock right before it starts ([CheckTerm]; the
// plugin's jobs do: each Top.gg request and redirect, retries included, in
// topgg; each post in autopost; each command read and publish in commands;
// each vote poll and reward or expiry handler call in voterewards; each role
// change and reminder in voterperks; each Discord rate-limit wait in shards).
// The term travels in the leader's context, not as a parameter, because
// those packages know nothing of fleets and the checks sit several calls
// below the job; outside a fleet the context carries none. A leader resumed
// after a pause past its deadline (SIGSTOP, a frozen VM) starts nothing: its
// first check fails and ends the term, whichever of its goroutines runs
// first. What is left is the time between a check and the send it guards:
// for a Top.gg request, the HTTP transport's work up to the last byte
// written (10-30 us on loopback); before a handler call, well under a
// microsecond. A pause that falls exactly there still lets that one action
// out after the pause, as it does a handler already running, which may call
// [CheckTerm] itself before each of its own requests. TTL/5 is the margin
// for that window, for the clock-rate difference between this machine and
// Redis, and for the new leader, which cannot win before the old lease
// expires in Redis.
//
// # Redis Cluster and Sentinel
//
// [Open] selects the deployment by the URL's scheme: redis:// or rediss://
// for one node, redis+cluster:// for Redis Cluster (the host and each addr
// parameter are seed nodes), redis+sentinel:// for a master found through
// Sentinel (the host and each addr parameter are sentinels; master_name is
// required); rediss+cluster:// and rediss+sentinel:// for TLS. See
// [NewUniversalClient]. [New] takes a client the caller built: a
// *redis.Client (Sentinel's failover client included) or a
// *redis.ClusterClient (give it a ClusterStateReloadInterval of a few
// seconds or less: go-redis learns of a promoted replica only from a reload
// or a MOVED reply, and a dead master sends none; the lease reloads the map
// after each of its own errors too). All of a bot's keys share one hash slot,
// so on a cluster one master (and its replicas) serves the bot.
//
// Replication is asynchronous, so a failover can lose the last writes the
// old master acknowledged. For the lease this matters, and it is closed in two
// ways:
//   - An election or a renewal counts only once every replica connected to
//     the master has acknowledged it (WAIT, within TTL/10, at most 1 s). An
//     election that is not acknowledged in time is given back (the lease
//     released, the term never begun, its token never used); a renewal that
//     is not does not move the leader's deadline. So a replica that Sentinel
//     or Cluster promotes holds every token a term has used, and the lease
//     with the expiry its leader counts on.
//   - A token is the larger of the last one plus one and Redis's clock in
//     milliseconds. A replica that was cut off when a token was drawn (so the
//     master did not wait for it) is promoted only after the master was
//     unreachable for the failover's detection time (down-after-milliseconds,
//     cluster-node-timeout: a second or more), so the next token, drawn on
//     its clock, is above the lost one, unless the two machines' clocks
//     differ by more than that time. The same holds when a single node loses
//     its data without persistence.
//
// Tokens therefore never repeat and never go backwards across a failover: a
// term's token is above every token of an earlier term, and a stale leader's
// fenced writes are refused on the promoted replica. Redis's
// min-replicas-to-write closes the cut-off case without relying on clocks,
// at the cost of refusing writes while no replica is connected.
//
// Other writes are not waited for: a failover can undo those the promoted
// replica had not received (the counts' last reports, a Redis state's; see
// package redisstate for what that means for votes).
//
// # Counts
//
// The shard counts ([Fleet.Counts]) keep every shard's guild count in one
// string per bot and shard count, 8 bytes per shard at offset shard*8
// (count, then Redis time of the report, big-endian uint32), stamped with
// Redis's clock so machines' clocks do not matter. A total with missing
// shards (never reported, or silent for MaxAge) is never posted.
//
// # Votes and commands
//
// fleet keeps no state: a bot's votes, command hash and opt-ins are a
// voterewards.State (package redisstate or pgstore), whose leader writes the
// plugin fences with the lease's token (State.UseFence).
//
// Open the fleet ([Open] or [New]) and give it to plugin.WithFleet; close it
// after the plugin's Run returned.
//
// # Faults
//
// Redis errors never panic and never end a Run: they are returned by
// the counts, and logged and retried by the lease, whose leader work
// pauses once the lease cannot be renewed in time and resumes when Redis is
// back (a failover is such a pause). [NewClient], [NewUniversalClient] and
// [Open] never show the password: not in errors, and no type of this package
// holds it.
//
// # Scale
//
// All of a bot's keys share one hash slot (so a fenced script may touch them
// atomically), so one Redis node carries the bot: single-node latency gives
// out first (each publish blocks it for 3-4 us per shard in it on a loaded 2-core VM), not memory
// or aggregation time. Hard limits of the layout: a shard's guild count below
// 2^32 and report times before 2106. The figures are in BENCHMARKS.md.
package fleet
