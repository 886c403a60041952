// Package topggprom exposes the hooks of go-topgg as Prometheus metrics,
// with github.com/prometheus/client_golang. It is the only package of the
// module that imports Prometheus: the client, autopost, commands and
// voterewards offer plain hooks (an observer func, a result callback) and
// know nothing of it.
//
// [New] registers the collectors; each hook is a method that takes plain
// values, so that it can be given to the hook as it is or from a one-line
// adapter:
//
//	m, err := topggprom.New(prometheus.DefaultRegisterer)
//	client, err := topgg.New(token, topgg.WithObserver(m.ObserveRequest))
//	p, err := plugin.New(client, cfg, plugin.WithMetrics(m)) // every job of the plugin
//
// Without the plugin, each job takes its hook: autopost.Config.OnPost (call
// AutopostAttempt), commands' OnResult (CommandSync),
// voterewards.Config.Observer (VotesIngested, VoteRewarded, VoteRetried,
// VoteGivenUp, VotesPending, VoteExpired; plugin's adapter shows how),
// webhook.Config.Observer (WebhookRequest(o.String())) and
// fleet.LeaseConfig.OnChange (FleetLeader(s.Leader)).
//
// Every name has the topgg_ prefix and its unit; every label value comes
// from a fixed set (route families, outcomes, vote sources), never from an
// id: a value outside its set is counted as "other". The metrics:
//
//	topgg_api_requests_total{route,method,code,outcome}   counter: attempts of API calls (code "none": no answer)
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
//	topgg_webhook_requests_total{outcome}                 counter: webhook deliveries by outcome (accepted, unauthorized,
//	                                                      forbidden, stale, bad_request, too_large, method_not_allowed, store_failed)
//	topgg_fleet_leader                                    gauge: 1 while this process leads the fleet
//	topgg_fleet_leadership_changes_total                  counter: times this process won or lost the lead
package topggprom
