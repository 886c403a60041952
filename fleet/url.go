package fleet

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/redact"
)

// NewClient returns a go-redis client for a redis:// or rediss:// (TLS) URL,
// e.g. "rediss://:password@redis.example:6380/0". The client respects context
// deadlines (ContextTimeoutEnabled), which the lease relies on to bound a
// renewal by its safety margin. The password never appears in the returned
// error: a URL that does not parse is reported without any of its text, other
// problems with the password replaced by "xxxxx".
func NewClient(rawURL string) (*redis.Client, error) {
	opts, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return redis.NewClient(opts), nil
}

// parseURL is NewClient without the client: the go-redis options for a URL,
// with ContextTimeoutEnabled set. Errors wrap [ErrBadConfig] and never hold
// the password.
func parseURL(rawURL string) (*redis.Options, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the whole input, and a password holding '/' or '#'
		// makes parts of it show up in the inner message too: say nothing.
		return nil, fmt.Errorf("%w: Redis URL does not parse (not shown: it may hold a password)", ErrBadConfig)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("%w: Redis URL %s: scheme must be redis or rediss", ErrBadConfig, shownURL(u))
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		msg := err.Error()
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
		return nil, fmt.Errorf("%w: Redis URL %s: %s", ErrBadConfig, shownURL(u), msg)
	}
	opts.ContextTimeoutEnabled = true
	return opts, nil
}

// shownURL is the URL as errors may show it: no password, query or fragment
// (their options may hold secrets too), by the module's one rule.
func shownURL(u *url.URL) string { return redact.URL(u) }
