package redisstate

import "github.com/redis/go-redis/v9"

// ledgerLua defines count(), which the ingest script calls for each vote it
// admits: it is voterewards.Stats.Add, line for line, on the record of
// KEYS[7] (see ledgerFields), then moves the voter on the all-time board
// KEYS[8] and on the vote's month board (KEYS[mi] sorted set, KEYS[mi+1]
// hash: voter -> "votes total rsec rnsec"). Times are (sec, nsec) pairs,
// exact in Lua's doubles. ZERO is the zero time's unix seconds.
//
// count(voter, w, csec, cnsec, msec, usec, unsec, mi) returns the voter's
// new record, which the script also splices into the stored vote.
const ledgerLua = `
local function before(s, n, s2, n2) return s < s2 or (s == s2 and n < n2) end
local function at(s, n) return string.format('%013d%09d', s + 1000000000000, n) end
local function ints(raw)
  local f = {}
  for x in string.gmatch(raw, '-?%d+') do f[#f+1] = tonumber(x) end
  return f
end
local function count(voter, w, cs, cn, ms, us, un, mi)
  local v, t, k, b, uS, uN, m, mv, mt, lS, lN = 0, 0, 0, 0, 0, 0, ZERO, 0, 0, 0, 0
  local raw = redis.call('HGET', KEYS[7], voter)
  if raw then
    v, t, k, b, uS, uN, m, mv, mt, lS, lN = unpack(ints(raw))
    redis.call('ZREM', KEYS[8], at(lS, lN) .. voter)
  end
  v, t = v + 1, t + w
  if v == 1 or ms > m then
    m, mv, mt = ms, 1, w
  elseif ms == m then
    mv, mt = mv + 1, mt + w
  end
  if not (v > 1 and before(cs, cn, lS, lN)) then
    if v > 1 and not before(uS, uN, cs, cn) then k = k + 1 else k = 1 end
    if k > b then b = k end
    uS, uN, lS, lN = us, un, cs, cn
  end
  local rec = string.format('%d %d %d %d %d %d %d %d %d %d %d', v, t, k, b, uS, uN, m, mv, mt, lS, lN)
  redis.call('HSET', KEYS[7], voter, rec)
  redis.call('ZADD', KEYS[8], -t, at(lS, lN) .. voter)

  local pv, pt, rS, rN = 0, 0, ZERO, 0
  local mraw = redis.call('HGET', KEYS[mi+1], voter)
  if mraw then
    pv, pt, rS, rN = unpack(ints(mraw))
    redis.call('ZREM', KEYS[mi], at(rS, rN) .. voter)
  end
  pv, pt = pv + 1, pt + w
  if before(rS, rN, cs, cn) then rS, rN = cs, cn end
  redis.call('HSET', KEYS[mi+1], voter, string.format('%d %d %d %d', pv, pt, rS, rN))
  redis.call('ZADD', KEYS[mi], -pt, at(rS, rN) .. voter)
  return rec
end
`

// leaderboardScript reads the top ARGV[1] members of board KEYS[1] and, for
// each, the voter's record in hash KEYS[2] (the ledger, or the month's
// standings): a flat list of member, record.
var leaderboardScript = redis.NewScript(`
local top = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
local out = {}
for _, m in ipairs(top) do
  out[#out+1] = m
  out[#out+1] = redis.call('HGET', KEYS[2], string.sub(m, 23)) or ''
end
return out
`)
