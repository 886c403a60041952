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
// [Fault]. [Server.NewClient] makes the topgg.Client a bot would make.
//
// The fake enforces the service's rules as the service does (authentication,
// lengths in runes, locales, metrics per project kind, batches, the
// announcement cooldown, the vote-history limits, cursors, the v0 rate
// limit), decodes bodies strictly, and answers errors as problem+json on v1
// and {"error": "..."} on v0. It is no stricter than the service: it takes
// what the official SDKs send, and [Server.Requests] keeps each request as
// sent. Where the spec leaves a status open it answers 400 for a bad query,
// 422 for a broken rule, 403 for what the token may not act on, and 429 with
// Retry-After for the cooldown and the v0 limit; a bad token gets 401 (400
// where the spec says so). [WithNow] drives every time rule.
//
// Configured with [WithWebhook] (v1, signed) or [WithLegacyWebhook] (v0), or
// [Server.AddWebhook] later, it delivers webhooks as Top.gg does, with its
// timeout and retries ([WithWebhookRetries] shortens them), each attempt
// recorded by [Server.Deliveries].
//
// For tests in other languages, [WithControlAPI] serves a JSON control API
// beside the API root, and topggtest/cmd/topggfake runs the fake as a process.
package topggtest
