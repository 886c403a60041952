package fleet

import (
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// clusterReload bounds how long a cluster client made here takes to find a
// promoted replica: a dead master sends no MOVED reply.
const clusterReload = time.Second

// noMaintNotifications returns c, or maintenance notifications off when the
// URL set none: "auto" turns itself off against Redis before 8 by writing the
// client's options, racing the lease's pinned Conn (go-redis v9.23).
func noMaintNotifications(c *maintnotifications.Config) *maintnotifications.Config {
	if c != nil {
		return c
	}
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// NewUniversalClient returns a go-redis client, with ContextTimeoutEnabled,
// for the URL's deployment: redis:// for one node, redis+cluster:// for Redis
// Cluster (host and addr parameters are seed nodes), redis+sentinel:// for a
// master through Sentinel (they are sentinels; master_name is required,
// password= is the master's); rediss for TLS. The host is required. A refused
// URL is a *[topgg.ConfigError] that never shows a password.
func NewUniversalClient(rawURL string) (redis.UniversalClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errUnparsable()
	}
	base, kind, _ := strings.Cut(u.Scheme, "+")
	if base != "redis" && base != "rediss" {
		return nil, badScheme(u)
	}
	if u.Hostname() == "" { // go-redis would dial localhost without a word
		return nil, configError("Redis URL", "%s: has no host (write localhost if that is meant)", shownURL(u))
	}
	plain := base + strings.TrimPrefix(rawURL, u.Scheme) // the URL go-redis parses: redis:// or rediss://
	switch kind {
	case "":
		opts, err := parseURL(rawURL)
		if err != nil {
			return nil, err
		}
		return redis.NewClient(opts), nil
	case "cluster":
		opts, err := redis.ParseClusterURL(plain)
		if err != nil {
			return nil, urlError(u, err)
		}
		opts.ContextTimeoutEnabled = true
		if opts.ClusterStateReloadInterval == 0 {
			opts.ClusterStateReloadInterval = clusterReload
		}
		opts.MaintNotificationsConfig = noMaintNotifications(opts.MaintNotificationsConfig)
		return redis.NewClusterClient(opts), nil
	case "sentinel":
		opts, err := redis.ParseFailoverURL(plain)
		if err != nil {
			return nil, urlError(u, err)
		}
		if opts.MasterName == "" {
			return nil, configError("Redis URL", "%s: a Sentinel URL needs master_name", shownURL(u))
		}
		opts.ContextTimeoutEnabled = true
		return redis.NewFailoverClient(opts), nil
	}
	return nil, badScheme(u)
}

func badScheme(u *url.URL) error {
	return configError("Redis URL", "%s: scheme must be redis, rediss, redis+cluster or redis+sentinel (rediss+ for TLS)",
		shownURL(u))
}

// errUnparsable: url.Error quotes the whole input, and a password holding
// '/' or '#' makes parts of it show up in the inner message too: say nothing.
func errUnparsable() error {
	return configError("Redis URL", "does not parse (not shown: it may hold a password)")
}

// parseURL is a single node's options.
func parseURL(rawURL string) (*redis.Options, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errUnparsable()
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, configError("Redis URL", "%s: scheme must be redis or rediss", shownURL(u))
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, urlError(u, err)
	}
	opts.ContextTimeoutEnabled = true
	opts.MaintNotificationsConfig = noMaintNotifications(opts.MaintNotificationsConfig)
	return opts, nil
}

// urlError is go-redis's complaint about u, with every secret of u (as a
// whole word) replaced by "xxxxx".
func urlError(u *url.URL, err error) error {
	msg := err.Error()
	var secrets []string
	if pw, ok := u.User.Password(); ok {
		secrets = append(secrets, pw)
	} else if u.User != nil {
		secrets = append(secrets, u.User.Username()) // the pre-ACL form redis://password@host
	}
	for k, vs := range u.Query() {
		if strings.Contains(strings.ToLower(k), "password") {
			secrets = append(secrets, vs...)
		}
	}
	return configError("Redis URL", "%s: %s", shownURL(u), httpx.Words(msg, "xxxxx", secrets...))
}

// shownURL is the URL as errors may show it.
func shownURL(u *url.URL) string { return httpx.RedactURL(u) }
