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
// sentinels [ErrNotFound], [ErrUnauthorized], [ErrRateLimited], [ErrPagination] and
// [ErrUnsafeRedirect] work with [errors.Is]; [ErrUnauthorized] is decided from the
// status and the route only. [Retryable] says, for any error, whether the call is
// worth making again.
//
// Idempotent calls are retried on 5xx, connection failures and short 429s with capped,
// jittered exponential backoff; announcements are never sent twice. A Retry-After,
// on any status, blocks the route's family from the moment the answer arrives: no
// call of the family is sent before it ends, whoever made it and whatever its
// deadline. A call that may be retried waits out a block of up to
// [RetryPolicy.MaxRetryAfter]; any other is refused at once with a local
// *[RateLimitError] that says how long to wait. A Retry-After given as an
// HTTP date is measured from the answer's own Date header (so a service whose
// clock is ahead or behind still gets the wait it asked for); a date more than
// 24 hours ahead is ignored (and logged once), as a missing one would be.
//
// [Client.AllVotes] always ends: cursors that cycle or pages that repeat end it
// with a *[PaginationError].
//
// The token is never part of an error, a log line or any formatting of the Client,
// whatever the service answers: redirects off the base URL's scheme and host are
// refused before the token could follow, and where the service quotes the token
// (an echoed Authorization header) it is replaced by "[redacted]".
package topgg
