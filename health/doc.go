// Package health answers liveness and readiness probes (/livez, /readyz)
// from named checks, with no metrics library.
//
// A [Check] is a name and a function that returns nil when its condition
// holds. A [Probe] runs its checks concurrently and answers within [Timeout],
// 200 "ok" when all pass and 503 naming the failed; with ?verbose it names
// every check, in the style of Kubernetes' own probes:
//
//	[+]shards ok
//	[-]token failed: Top.gg refused the token (401): check ...
//	readyz check failed
//
// plugin.Plugin gives its checks with LivenessChecks and ReadinessChecks.
package health
