// Package topgg is a client of the Top.gg API: the current interface (v1,
// acting on the project that owns the token, "@me") and the legacy interface
// (v0, /bots, on [Client.Legacy]). A [Client] is made once with [New] and
// shared; it is safe for concurrent use.
//
// Every call takes a [context.Context] first and checks its arguments against
// the service's rules before anything is sent (a *[ValidationError]).
// Failures are typed for [errors.As]: no answer (*[RequestError]), an answer
// that could not be decoded (*[DecodeError]), or a refusal (*[APIError],
// *[RateLimitError]); the sentinels work with [errors.Is]. [Retryable] says
// whether a call is worth making again.
//
// Idempotent calls are retried (see [RetryPolicy]). A Retry-After, on any
// status, blocks the route's family (see [RateLimitError]).
//
// The token is never part of an error, a log line or any formatting of the
// Client, and a redirect off the base URL's scheme and host is refused before
// the token could follow.
package topgg
