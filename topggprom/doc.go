// Package topggprom exposes the observations of go-topgg's jobs as
// Prometheus metrics; it is the only package of the module that imports
// Prometheus. [New] makes a [Collector] and registers it; each of its Observe
// methods is one job's hook, of that hook's type:
//
//	c, err := topggprom.New(prometheus.DefaultRegisterer)
//	client, err := topgg.New(token, topgg.WithObserver(c.ObserveRequest))
//	p, err := plugin.New(client, cfg, plugin.WithMetrics(c)) // every job of the plugin
//
// The Collector's methods never panic. Every label value comes from a fixed
// set, never an id, so cardinality stays bounded; the metrics are listed in
// the README.
package topggprom
