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
// Without the plugin, each job takes its method as its hook (see the README).
// The Collector's methods do not panic, not even on a nil Collector.
//
// Every label value comes from a fixed set, never from an id, so
// cardinality stays bounded; the metrics are listed in the README.
package topggprom
