// Package topggtest is a spec-faithful fake of the Top.gg service for tests:
// v1 under URL+"/v1" and the legacy v0 under URL+"/bots", over real HTTP on
// 127.0.0.1. The API root ends in "/api", like https://top.gg/api, so a
// client that builds absolute paths instead of resolving against its base
// URL gets a 404.
//
// It follows the convention of net/http/httptest, as
// [github.com/dblkit/go-topgg/discordtest] does: [NewServer] fails (never
// panics) on an invalid option, [Server.URL] is the base URL, [Server.Client]
// an *http.Client wired to it, [Server.Close] and
// [Server.CloseClientConnections] stop it, and [Server.Inject] plays a
// [Fault] (the same fields in both kits). [Server.NewClient] makes the
// [github.com/dblkit/go-topgg/topgg.Client] a bot would make.
//
// The fake enforces the service's rules as the service does (authentication,
// lengths in runes, locales, metrics shapes per project kind, batches, the
// announcement cooldown, the vote-history limits, cursors, the v0 rate
// limit), decodes bodies strictly (an unknown member is refused), and answers
// errors as problem+json on v1 and {"error": "..."} on v0. It is no stricter
// than the service: it takes what the official SDKs send (v0 routes without
// the bot id, for the token's bot; GET /weekend; "Bearer" on v0; POST for
// commands; ISO 8601 timestamps with or without offset, fraction or time;
// "//" in paths), and [Server.Requests] keeps each request as sent. A bad
// token gets 400 where the spec says so (project details and update,
// announcements, metrics, batch), else 401. Where the spec leaves the status
// open it answers: 400 for a bad startDate, cursor or source (v1) and a bad
// query or body (v0); 422 for a body that breaks a rule and a startDate over
// a year back; 403 for commands of a project that is not a Discord bot, or a
// v0 bot the token does not own; 429 with Retry-After and "retry-after" for
// the cooldown and the v0 limit; 415 for a body that is not
// application/json; 413 over 8 MiB; 404 and 405 (with Allow) for unknown
// paths and methods. A clock given by [WithNow] drives every time rule.
//
// Configured with [WithWebhook] (v1, signed) or [WithLegacyWebhook] (v0), or
// pointed at a receiver later with [Server.AddWebhook], it delivers webhooks
// as Top.gg does: within a 5 s timeout, retried after about 1, 2 and 4 s on a
// timeout or a 5xx ([WithWebhookRetries] shortens the schedule), each attempt
// recorded by [Server.Deliveries].
//
// For tests in other languages, [WithControlAPI] serves a JSON control API
// beside the API root (votes, webhooks, faults, the record), and the command
// topggtest/cmd/topggfake runs the fake as a process of its own.
package topggtest
