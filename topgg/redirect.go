package topgg

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/dblkit/go-topgg/internal/redact"
)

// ErrUnsafeRedirect matches the *RequestError of a call whose answer redirected
// to another scheme or host. The client refuses such a redirect before following
// it, so the token is sent neither in clear text (https downgraded to http) nor to
// another host. Retrying does not help: fix the base URL.
var ErrUnsafeRedirect = errors.New("topgg: redirect refused: it leaves the base URL's scheme and host, and the token must not follow")

// maxRedirects is net/http's own limit, kept when the caller's *http.Client has
// no CheckRedirect of its own: a service that redirects in a circle is stopped.
const maxRedirects = 10

// safeRedirects returns the CheckRedirect of the client's copy of the caller's
// *http.Client: a redirect is followed only to the scheme and host of the first
// request (an upgrade from http to https on the same host is allowed), and then
// only as next (the caller's own policy, or net/http's limit of 10) allows. The
// refusal names both origins, scrubbed of any trace of the token.
func safeRedirects(next func(*http.Request, []*http.Request) error, scrub redact.Scrubber) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !sameOrigin(via[0].URL, req.URL) {
			return fmt.Errorf("%w: %s to %s", ErrUnsafeRedirect, scrub.Text(origin(via[0].URL)), scrub.Text(origin(req.URL)))
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("topgg: stopped after %d redirects", maxRedirects)
		}
		return nil
	}
}

// sameOrigin reports whether to keeps from's host (and port) and does not
// downgrade its scheme.
func sameOrigin(from, to *url.URL) bool {
	switch {
	case strings.EqualFold(from.Scheme, to.Scheme):
	case strings.EqualFold(from.Scheme, "http") && strings.EqualFold(to.Scheme, "https"):
	default:
		return false
	}
	return strings.EqualFold(from.Hostname(), to.Hostname()) && effectivePort(from) == effectivePort(to)
}

// effectivePort is the URL's port, or its scheme's default one. An upgrade from
// http to https on default ports keeps the host.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" && !(p == "80" && strings.EqualFold(u.Scheme, "http")) && !(p == "443" && strings.EqualFold(u.Scheme, "https")) {
		return p
	}
	return ""
}

// origin is scheme://host, without user info, path or query (which a service
// could fill with anything).
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }
