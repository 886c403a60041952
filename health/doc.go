// Package health answers liveness and readiness probes (/livez, /readyz)
// from named checks, with no metrics library.
//
// A [Check] is a name and a function that returns nil when its condition
// holds. [NewProbe] makes a [Probe], an http.Handler of checks: it runs them
// concurrently and answers within [Timeout], 200 "ok" when every check
// passes and 503 otherwise, naming the failed checks; with
// the query parameter verbose it names every check, one per line, in the
// style of Kubernetes' own probes:
//
//	[+]shards ok
//	[-]token failed: Top.gg refused the token (401): check ...
//	readyz check failed
//
// plugin.Plugin gives its checks with LivenessChecks and ReadinessChecks.
package health
