package redisstate

import (
	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/fence"
)

// The vote store's scripts. Every key of one bot shares one Redis Cluster
// slot (fleet.Key). Times travel as (unix seconds, nanoseconds): Lua's
// doubles cannot hold unix nanoseconds, and the dedup rule must tell 11 h
// from 11 h minus 1 ns.
//
// Keys (after the fence's own, which the fence prelude removes):
//
//	KEYS[1] seen      hash  key -> encoded vote (the dedup set)
//	KEYS[2] voters    hash  voter id -> "sec:nsec,sec:nsec" (CreatedAt of its votes in seen)
//	KEYS[3] order     zset  key scored by CreatedAt seconds (prune walks it)
//	KEYS[4] meta      hash  key -> "csec cnsec esec ensec voter" (for prune)
//	KEYS[5] pending   hash  key -> encoded vote (rewards not yet delivered)
//	KEYS[6] checkpoint string
//	KEYS[7] ledger    hash  voter id -> its Stats (see ledger.go)
//	KEYS[8] board     zset  the all-time leaderboard
//	KEYS[9...]        each month's board (zset) and standings (hash) a call touches

// ingestBody adds the votes that are not duplicates, counts each in the
// ledger (count, in ledgerLua) and stores it with its voter's new record as
// field "s", and in the same atomic step saves the checkpoint (if given) and
// publishes the added votes, so that the feed's order is the Ingest order.
//
// ARGV[1] channel, ARGV[2] checkpoint, ARGV[3] "1" to save it, ARGV[4] dedup
// window in ns, ARGV[5] the zero time's unix seconds, then per vote
// ARGV[i..i+11]: key, voter, csec, cnsec, esec, ensec, encoded, then the
// ledger's weight, month sec, streak-until sec and nsec, and month KEYS
// index. Returns, per added vote, its 0-based index and its ledger record.
const ingestBody = `
local W = tonumber(ARGV[4])
local ZERO = tonumber(ARGV[5])
` + ledgerLua + `
local Wsec = math.floor(W / 1000000000) + 2
local added, msg = {}, {}
local n = 0
for i = 6, #ARGV, 12 do
  local voter, cs, cn = ARGV[i+1], tonumber(ARGV[i+2]), tonumber(ARGV[i+3])
  local times = redis.call('HGET', KEYS[2], voter)
  local dup = false
  if times then
    for s, ns in string.gmatch(times, '(-?%d+):(%d+)') do
      local ds = tonumber(s) - cs
      if ds > -Wsec and ds < Wsec then
        local d = ds * 1000000000 + (tonumber(ns) - cn)
        if d < W and d > -W then dup = true break end
      end
    end
  end
  if not dup then
    local entry = ARGV[i+2] .. ':' .. ARGV[i+3]
    if times then entry = times .. ',' .. entry end
    redis.call('HSET', KEYS[2], voter, entry)
    local rec = count(voter, tonumber(ARGV[i+7]), cs, cn, tonumber(ARGV[i+8]), tonumber(ARGV[i+9]), tonumber(ARGV[i+10]), tonumber(ARGV[i+11]))
    local enc = string.sub(ARGV[i+6], 1, -2) .. ',"s":"' .. rec .. '"}'
    redis.call('HSET', KEYS[1], ARGV[i], enc)
    redis.call('HSET', KEYS[5], ARGV[i], enc)
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i+2] .. ' ' .. ARGV[i+3] .. ' ' .. ARGV[i+4] .. ' ' .. ARGV[i+5] .. ' ' .. voter)
    redis.call('ZADD', KEYS[3], cs, ARGV[i])
    added[#added+1] = n
    added[#added+1] = rec
    msg[#msg+1] = enc
  end
  n = n + 1
end
if ARGV[3] == '1' then
  redis.call('SET', KEYS[6], ARGV[2])
end
if #msg > 0 then
  redis.call('PUBLISH', ARGV[1], table.concat(msg, '\n'))
end
return added
`

// ingestScript is Ingest without a checkpoint (a webhook, in any process);
// ingestFenced is the leader's poll, whose checkpoint is fenced.
var (
	ingestScript = redis.NewScript(ingestBody)
	ingestFenced = fence.NewScript(ingestBody)
)

// deliveredScript removes a vote from the pending rewards and, with ARGV[2] "1",
// adds it to the expiries. KEYS pending, expiries; ARGV key, flag, encoded vote.
var deliveredScript = fence.NewScript(`
redis.call('HDEL', KEYS[1], ARGV[1])
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
end
return 1
`)

// expiredScript removes a vote from the pending expiries. KEYS[1] expiries; ARGV[1] key.
var expiredScript = fence.NewScript(`
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
`)

// pruneScript removes, in creation order, the votes of the dedup set created
// before ARGV[1..2] (sec, nsec) and expired at ARGV[3..4], and stops at the
// first that must stay or after ARGV[5] votes. ARGV[6] is the vote lifetime
// in seconds, to fix an expiry out of range as sanitize does. KEYS as above
// (1 to 4). Returns how many it removed.
var pruneScript = fence.NewScript(`
local cbs, cbn, nows, nown = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local limit = tonumber(ARGV[5])
local life = tonumber(ARGV[6])
local removed = 0
local function before(s, n, s2, n2) return s < s2 or (s == s2 and n < n2) end
while removed < limit do
  local batch = redis.call('ZRANGE', KEYS[3], 0, 99)
  if #batch == 0 then return removed end
  for _, key in ipairs(batch) do
    local m = redis.call('HGET', KEYS[4], key)
    if m then
      local css, cns, es, en, voter = string.match(m, '^(-?%d+) (%d+) (-?%d+) (%d+) (.*)$')
      local cs, cn = tonumber(css), tonumber(cns)
      es, en = tonumber(es), tonumber(en)
      if es < cs or es - cs > 2 * life then
        -- An expiry no sanitized vote has (a planted or damaged record):
        -- taken as sanitize would fix it, else it would stop every prune.
        es, en = cs + life, cn
      end
      if not before(cs, cn, cbs, cbn) or before(nows, nown, es, en) then return removed end
      local times = redis.call('HGET', KEYS[2], voter)
      if times then
        local entry, kept, dropped = css .. ':' .. cns, {}, false
        for t in string.gmatch(times, '[^,]+') do
          if not dropped and t == entry then dropped = true else kept[#kept+1] = t end
        end
        if #kept == 0 then redis.call('HDEL', KEYS[2], voter) else redis.call('HSET', KEYS[2], voter, table.concat(kept, ',')) end
      end
      redis.call('HDEL', KEYS[1], key)
      redis.call('HDEL', KEYS[4], key)
    end
    redis.call('ZREM', KEYS[3], key)
    removed = removed + 1
    if removed >= limit then return removed end
  end
end
return removed
`)
