// Package topggtest is an in-memory, spec-faithful fake of the Top.gg service
// for tests: the current interface (v1, under URL+"/v1") and the legacy
// interface (v0, under URL+"/bots"), served over real HTTP on 127.0.0.1.
//
// It is modelled on net/http/httptest, as is
// [github.com/dblkit/go-topgg/discordtest], the fake Discord, and both follow
// one convention: [NewServer] starts a listener and fails (never panics) on
// an invalid option, [Server.URL] is the API root to give a client as its
// base URL, [Server.Client] returns an *http.Client wired to it,
// [Server.Close] and [Server.CloseClientConnections] stop it and drop
// connections, and [Server.Inject] plays a [Fault] (the same fields in both
// kits). Every misuse is an error. [Server.NewClient] makes the
// [github.com/dblkit/go-topgg/topgg.Client] a bot would make, pointed at the
// fake:
//
//	srv, err := topggtest.NewServer()
//	require.NoError(t, err)
//	t.Cleanup(srv.Close)
//	client, err := srv.NewClient()
//	require.NoError(t, err)
//
// The API root carries a path prefix ("/api", like the real
// https://top.gg/api) so that a client which builds absolute paths instead of
// resolving against its base URL gets a 404.
//
// The fake enforces the service's rules the way the service does: bearer
// authentication on v1 and a bare token on v0, field lengths in characters
// (runes), locales, metrics shapes by project kind, batch sizes and ordering,
// the announcement cooldown, the vote-history start limit, cursor paging and
// the v0 rate limit. Errors are problem+json documents on v1
// ({"type","title","status","detail"}) and {"error": "..."} on v0.
//
// Tests inspect what reached the fake with [Server.Requests],
// [Server.Metrics], [Server.Commands], [Server.Announcements],
// [Server.ProjectUpdates] and [Server.LegacyStats], drive it with
// [Server.AddVote], [Server.AddBot] and [Server.ExpireCursors], and inject
// failures (statuses, rate limits, dropped connections, delays, bodies that
// never end) with [Server.Inject]. A clock given by [WithNow] drives every time rule, so
// cooldowns and expiries can be tested without waiting.
//
// Where the spec leaves an answer open, the fake chooses as follows. v1:
// a missing or wrong token is 401; a missing or unparsable startDate, a
// refused or expired cursor and an unknown source are 400; a startDate more
// than a year back and every body that breaks a rule are 422; PUT commands
// on a project that is not a Discord bot is 403; the announcement cooldown
// is a 429 problem that also carries "retry-after" (seconds) beside the
// Retry-After header. v0: a bad query or body is 400, acting on a listed bot
// the token does not own is 403, an unknown bot is 404 {"error":"Not found"},
// and the rate limit is 429 with Retry-After and {"retry-after": N}. Both: a
// body that is not Content-Type application/json is 415, a body over 8 MiB
// is 413, an unknown path is 404 and a wrong method 405 with Allow. Bodies
// are decoded strictly (unknown members are refused), so a misspelt field in
// a client fails loudly.
//
// Like the real service, the fake delivers webhooks when configured with
// [WithWebhook] (v1, signed with a "whs_" secret; see package
// topgg/webhook) or [WithLegacyWebhook] (v0, an Authorization value):
// [Server.AddVote] sends a vote.create, [Server.SendWebhookTest] a
// webhook.test and [Server.SendWebhookEvent] any other event, each within
// a 5 s timeout and retried after about 1, 2 and 4 s on a timeout or a 5xx,
// never on a 4xx ([WithWebhookRetries] shortens the schedule).
// [Server.Deliveries] records every attempt and its answer.
//
// Every method of *Server is safe for concurrent use, including while
// requests are being served.
package topggtest
