// Package topgg is a client of the Top.gg API: the current interface (v1, acting on
// the project that owns the token, "@me") and the legacy interface (v0, /bots).
//
// A [Client] is made once with [New] and shared; it is safe for concurrent use.
// v1 calls are methods of the Client; v0 calls live on [Client.Legacy].
//
// Every call takes a [context.Context] first and checks its arguments against the
// service's rules before anything is sent: a broken rule returns a *[ValidationError]
// and no request. Failures are typed in three layers, all usable with [errors.As]:
// the request never got an answer (*[RequestError]), the answer could not be decoded
// (*[DecodeError]), or the service said no (*[APIError], *[RateLimitError]). The
// sentinels [ErrNotFound], [ErrUnauthorized] and [ErrRateLimited] work with [errors.Is].
//
// Idempotent calls are retried on 5xx, connection failures and short 429s with capped,
// jittered exponential backoff that honours Retry-After; announcements are never
// sent twice. After a 429 the client remembers the block and fails fast, without a
// request, until it ends.
//
// The token is never part of an error, a log line or any formatting of the Client.
package topgg
