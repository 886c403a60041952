// Package fleet runs one bot as many processes, on one or many machines,
// through a shared Redis (github.com/redis/go-redis/v9): one leader at a time
// for the leader-only jobs, and the exact server count of all shards.
//
// # Leadership
//
// [Lease] elects one leader per bot, each term with a fencing token larger
// than every earlier one; [Lease.Run] runs the leader's work with a context
// that ends before the lease can expire. A stale leader (paused past its
// lease) cannot write shared state: see [Fence]. The token counter must survive as long as the leases: run Redis with AOF (or RDB)
// persistence. If it is lost anyway, the next token is Redis's clock in
// milliseconds, above every token drawn before.
//
// # The leader's term, and the window left
//
// The fence guards Redis, not what a leader does elsewhere: a request to
// Top.gg, a reward or expiry handler's call, a message to Discord. So each
// term has a deadline, the send time of the last successful renewal plus TTL
// minus TTL/5 (moved on each renewal), and every leader-only action checks
// it on the local monotonic clock right before it starts ([CheckTerm]; the
// plugin's jobs do: each Top.gg request, retries included, each vote poll,
// each reward or expiry handler call, each command sync). A leader resumed
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
// [Fleet.VoteStore] is the voterewards.Store (and Feed) of the fleet;
// [Fleet.HashStore] keeps the command hash in Redis. Leader writes are fenced.
//
// Open the fleet ([Open] or [New]) and give it to plugin.WithFleet; close it
// after the plugin's Run returned.
//
// # Faults
//
// Redis errors never panic and never end a Run: they are returned by
// the counts, and logged and retried by the lease, whose leader work
// pauses once the lease cannot be renewed in time and resumes when Redis is
// back. [NewClient] and [Open] accept redis:// and rediss:// (TLS) URLs and
// never show the password: not in errors, and no type of this package holds
// it.
//
// # Scale
//
// All of a bot's keys share one hash slot (so a fenced script may touch them
// atomically), so one Redis node carries the bot: single-node latency gives
// out first (each publish blocks it for 3-4 us per shard in it on a loaded 2-core VM), not memory
// or aggregation time. Hard limits of the layout: a shard's guild count below
// 2^32 and report times before 2106. The figures are in BENCHMARKS.md.
package fleet
