package fleet

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/dblkit/go-topgg/internal/redact"
)

// The URL schemes [NewUniversalClient] and [Open] accept, by deployment.
const (
	// SchemeCluster (or "rediss+cluster", TLS) selects Redis Cluster: the
	// host and every addr query parameter are seed nodes, e.g.
	// "redis+cluster://:password@10.0.0.1:6379?addr=10.0.0.2:6379&addr=10.0.0.3:6379"
	// (go-redis's ParseClusterURL with redis:// or rediss://).
	SchemeCluster = "redis+cluster"
	// SchemeSentinel (or "rediss+sentinel", TLS) selects a master through
	// Redis Sentinel: the host and every addr query parameter are sentinels,
	// master_name names the master, the user info is the sentinels' own
	// credentials and the password query parameter the master's, e.g.
	// "redis+sentinel://10.0.0.1:26379/0?master_name=mymaster&addr=10.0.0.2:26379&password=secret"
	// (go-redis's ParseFailoverURL with redis:// or rediss://).
	SchemeSentinel = "redis+sentinel"
)

// clusterReload is how often (at most, while the client is used) a cluster
// client made here reloads the slot map: go-redis learns that a replica was
// promoted only from a reload or a MOVED reply, and a dead master sends none.
const clusterReload = time.Second

// NewClient returns a go-redis client for a redis:// or rediss:// (TLS) URL,
// e.g. "rediss://:password@redis.example:6380/0". The client respects context
// deadlines (ContextTimeoutEnabled), which the lease relies on to bound a
// renewal by its safety margin. The password never appears in the returned
// error: a URL that does not parse is reported without any of its text, other
// problems with the password replaced by "xxxxx". For Cluster and Sentinel
// URLs, use [NewUniversalClient].
func NewClient(rawURL string) (*redis.Client, error) {
	opts, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return redis.NewClient(opts), nil
}

// noMaintNotifications returns c, or a config with go-redis's maintenance
// notifications off when the URL set none. Their default, "auto", tries a
// handshake on each new connection and, against a server without them
// (Redis before 8), turns itself off by writing the client's options: a
// write that races (go-redis v9.23) with a connection of the lease's pinned
// Conn starting at the same time, since Conn's copy shares those options
// under its own lock. The fleet needs no maintenance notifications.
func noMaintNotifications(c *maintnotifications.Config) *maintnotifications.Config {
	if c != nil {
		return c
	}
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// NewUniversalClient returns the go-redis client a URL selects: a single node
// for redis:// and rediss:// (as [NewClient]), a *redis.ClusterClient for
// [SchemeCluster] (it reloads the slot map at least every second while in
// use, so that it finds a promoted replica), a Sentinel failover client
// (*redis.Client) for [SchemeSentinel]; each with ContextTimeoutEnabled. Its
// errors wrap [ErrBadConfig] and never show a password (neither the user
// info's nor a query parameter's).
func NewUniversalClient(rawURL string) (redis.UniversalClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errUnparsable
	}
	base, kind, _ := strings.Cut(u.Scheme, "+")
	if base != "redis" && base != "rediss" {
		return nil, fmt.Errorf("%w: Redis URL %s: scheme must be redis, rediss, %s or %s (rediss+ for TLS)",
			ErrBadConfig, shownURL(u), SchemeCluster, SchemeSentinel)
	}
	plain := base + strings.TrimPrefix(rawURL, u.Scheme) // the URL go-redis parses: redis:// or rediss://
	switch kind {
	case "":
		return NewClient(rawURL)
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
			return nil, fmt.Errorf("%w: Redis URL %s: a Sentinel URL needs master_name", ErrBadConfig, shownURL(u))
		}
		opts.ContextTimeoutEnabled = true
		return redis.NewFailoverClient(opts), nil
	}
	return nil, fmt.Errorf("%w: Redis URL %s: scheme must be redis, rediss, %s or %s (rediss+ for TLS)",
		ErrBadConfig, shownURL(u), SchemeCluster, SchemeSentinel)
}

// errUnparsable: url.Error quotes the whole input, and a password holding
// '/' or '#' makes parts of it show up in the inner message too: say nothing.
var errUnparsable = fmt.Errorf("%w: Redis URL does not parse (not shown: it may hold a password)", ErrBadConfig)

// parseURL is NewClient without the client: the go-redis options for a URL,
// with ContextTimeoutEnabled set. Errors wrap [ErrBadConfig] and never hold
// the password.
func parseURL(rawURL string) (*redis.Options, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errUnparsable
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("%w: Redis URL %s: scheme must be redis or rediss", ErrBadConfig, shownURL(u))
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, urlError(u, err)
	}
	opts.ContextTimeoutEnabled = true
	opts.MaintNotificationsConfig = noMaintNotifications(opts.MaintNotificationsConfig)
	return opts, nil
}

// urlError is go-redis's complaint about u, with every secret of u (the
// user info's password, or its user name when alone, the value of each query parameter whose name says
// password) replaced by "xxxxx".
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
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return fmt.Errorf("%w: Redis URL %s: %s", ErrBadConfig, shownURL(u), msg)
}

// shownURL is the URL as errors may show it: no password, query or fragment
// (their options may hold secrets too), by the module's one rule.
func shownURL(u *url.URL) string { return redact.URL(u) }
