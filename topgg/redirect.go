package topgg

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
)

// ErrUnsafeRedirect matches the *RequestError of an answer redirecting to
// another host or to plain http: the token must not follow.
var ErrUnsafeRedirect = errors.New("topgg: redirect refused: it leaves the base URL's scheme and host, and the token must not follow")

// maxRedirects is net/http's own limit, kept without a caller's CheckRedirect.
const maxRedirects = 10

// safeRedirects returns the CheckRedirect of the client's *http.Client: a
// redirect is followed only within the first request's scheme (or to https)
// and host, then as next (or net/http's limit) allows.
func safeRedirects(next func(*http.Request, []*http.Request) error, scrub httpx.Scrubber) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !sameOrigin(via[0].URL, req.URL) {
			return fmt.Errorf("%w: %s to %s", ErrUnsafeRedirect, scrub.Text(origin(via[0].URL)), scrub.Text(origin(req.URL)))
		}
		// net/http sends the redirect itself: the term is checked before it too.
		if err := clock.CheckTerm(req.Context()); err != nil {
			return err
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

// sameOrigin reports whether to keeps from's host and port and its scheme (or https).
func sameOrigin(from, to *url.URL) bool {
	upgrade := strings.EqualFold(from.Scheme, "http") && strings.EqualFold(to.Scheme, "https")
	return (upgrade || strings.EqualFold(from.Scheme, to.Scheme)) &&
		strings.EqualFold(from.Hostname(), to.Hostname()) && effectivePort(from) == effectivePort(to)
}

// effectivePort is the URL's port, or "" for its scheme's default one.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" && !(p == "80" && strings.EqualFold(u.Scheme, "http")) && !(p == "443" && strings.EqualFold(u.Scheme, "https")) {
		return p
	}
	return ""
}

// origin is scheme://host, without user info, path or query.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }
