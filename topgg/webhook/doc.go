// Package webhook receives Top.gg webhook deliveries: it verifies v1
// signatures and v0 authorization and decodes the typed events. A vote store
// plugs in through [Config.OnVote] (package voterewards: OnVote:
// poller.IngestWebhook).
//
// v1 deliveries carry an x-topgg-signature header, "t=<unix seconds>,v1=<hex>":
// an HMAC-SHA256 keyed with the webhook's "whs_" secret over "<t>.<raw body>".
// v0 deliveries carry the shared secret in the Authorization header. No
// secret, signature or body reaches a log or an error.
package webhook
