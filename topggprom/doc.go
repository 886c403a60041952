// Package topggprom exposes the observations of go-topgg's jobs as
// Prometheus metrics, with github.com/prometheus/client_golang. It is the
// only package of the module that imports Prometheus: the client and the
// jobs tell typed values (a [topgg.Request], an autopost.Result, a
// voterewards.Event, a webhook.Outcome, a fleet.LeaseState) to a hook of
// their own type, and know nothing of it.
//
// [New] makes a [Collector] and registers it; each of its Observe methods is
// one job's hook, of that hook's type (ObserveSync without the context
// commands.JobConfig.OnResult passes first):
//
//	c, err := topggprom.New(prometheus.DefaultRegisterer)
//	client, err := topgg.New(token, topgg.WithObserver(c.ObserveRequest))
//	p, err := plugin.New(client, cfg, plugin.WithMetrics(c)) // every job of the plugin
//
// Without the plugin: autopost.Config.OnPost = c.ObservePost,
// voterewards.Config.Observer = c.ObserveVote, webhook.Config.Observer =
// c.ObserveWebhook, fleet.LeaseConfig.OnChange = c.ObserveLease, and
// commands.JobConfig.OnResult = func(_ context.Context, r commands.Result, err
// error) { c.ObserveSync(r, err) }. The jobs contain a panic in a
// hook and log it; the Collector's methods do not panic, not even on a nil
// Collector.
//
// Every name has the topgg_ prefix and its unit; every label value comes
// from a fixed set (route families, methods, documented status codes,
// outcomes, vote sources), never from an id: a value outside its set is
// counted as "other" ("unknown" for a route or a request outcome). The
// metrics:
//
//	topgg_api_requests_total{route,method,code,outcome}   counter: attempts of API calls (code: 200, 201, 204, 400,
//	                                                      401, 403, 404, 408, 413, 429, 500, 502, 503, 504,
//	                                                      none (no answer) or other)
//	topgg_api_request_duration_seconds{route}             histogram: attempts that were sent
//	topgg_api_retries_total{route}                        counter: attempts after the first of a call
//	topgg_api_token_refused{api}                          gauge: 1 while the service refuses the token (api "v1" or "v0")
//	topgg_autopost_posts_total{outcome}                   counter: posted, unchanged, incomplete, failed
//	topgg_autopost_servers, topgg_autopost_shards         gauges: the counts of the last attempt
//	topgg_autopost_backfilled_samples_total               counter: missed samples sent in a batch
//	topgg_autopost_last_post_timestamp_seconds            gauge: time of the last successful post
//	topgg_commands_syncs_total{outcome}                   counter: published, unchanged, skipped, failed
//	topgg_votes_ingested_total{source}                    counter: new votes stored (history, webhook, webhook-v0)
//	topgg_votes_duplicate_total{source}                   counter: records of a vote already stored
//	topgg_votes_rewarded_total{source}                    counter: votes whose reward handler succeeded
//	topgg_vote_reward_latency_seconds{source}             histogram: from a vote's created_at to its handler's success
//	topgg_vote_reward_retries_total{source}               counter: reward handler attempts after the first
//	topgg_votes_given_up_total{source}                    counter: votes whose handler failed every attempt
//	topgg_votes_pending                                   gauge: votes stored and not yet rewarded
//	topgg_vote_expiries_total                             counter: expiry handlers that succeeded
//	topgg_webhook_requests_total{outcome}                 counter: webhook deliveries by outcome (webhook.Outcome's
//	                                                      names: accepted, unauthorized, forbidden, stale,
//	                                                      bad_request, too_large, method_not_allowed, store_failed, ...)
//	topgg_fleet_leader                                    gauge: 1 while this process leads the fleet
//	topgg_fleet_leadership_changes_total                  counter: times this process won or lost the lead
package topggprom
