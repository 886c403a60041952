package fleet

import "github.com/redis/go-redis/v9"

// acquireScript takes the lease if nobody holds it and draws the next fencing
// token atomically, so that "the counter equals my token" means "nobody won
// after me". The token is at least Redis's clock in ms, so that it still grows
// after a failover lost the counter (see the package doc).
// KEYS[1] lease key, KEYS[2] token counter; ARGV[1] holder id, ARGV[2] TTL ms.
// Returns {token, 0} when won, {0, remaining TTL ms} when held by another,
// and a DAMAGED error, writing nothing, when the counter holds no integer.
var acquireScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('PTTL', KEYS[1])}
end
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local raw = redis.call('GET', KEYS[2]) or '0'
local last = tonumber(raw)
if not last or not string.match(raw, '^%d+$') then
  return redis.error_reply('DAMAGED fencing counter holds no token')
end
if last >= t then t = last + 1 end
redis.call('SET', KEYS[2], string.format('%d', t))
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. string.format('%d', t), 'NX', 'PX', ARGV[2])
return {t, 0}
`)

// renewScript extends the lease only if it still holds our value.
// KEYS[1] lease key; ARGV[1] our value, ARGV[2] TTL ms. Returns 1 or 0.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

// releaseScript deletes the lease only if it still holds our value and tells
// the contenders, so that a successor takes over at once.
// KEYS[1] lease key; ARGV[1] our value, ARGV[2] release channel. Returns 1 or 0.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  return 1
end
return 0
`)
