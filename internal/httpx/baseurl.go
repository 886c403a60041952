// This file: the rules for the base URL of a service a token is
// sent to, and the loopback check: plain http and no interval floors only for
// this machine.

package httpx

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// URLError is a refused base URL. Its message shows the URL as RedactURL does,
// and not at all when it does not parse.
type URLError struct {
	// URL is the URL as shown (RedactURL), or "" when it does not parse.
	URL string
	// Problem says what is wrong with it.
	Problem string
}

// Error returns `"<URL>": <Problem>`, or the problem alone.
func (e *URLError) Error() string {
	if e.URL == "" {
		return e.Problem
	}
	return strconv.Quote(e.URL) + ": " + e.Problem
}

// ParseBaseURL checks raw, a REST base URL joined with paths: absolute http(s), no
// user info, query or fragment (credentials travel in headers), and plain
// http only to this machine unless insecure (the token would cross the
// network in clear text). Trailing slashes are dropped. Errors are *URLError.
func ParseBaseURL(raw string, insecure bool) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, &URLError{Problem: "is not an absolute http(s) URL"}
	}
	bad := func(problem string) error { return &URLError{URL: RedactURL(u), Problem: problem} }
	switch {
	case u.User != nil:
		return nil, bad("takes no user info")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, bad("takes no query or fragment")
	case u.Scheme == "http" && !insecure && !Loopback(u.Hostname()):
		return nil, bad("plain http is only allowed to this machine (localhost, 127.0.0.1, ::1); " +
			"elsewhere the token would travel in clear text, so use https")
	}
	return u, nil
}

// Loopback reports whether host (a URL's Hostname(), without port or
// brackets) is this machine: "localhost" or a loopback IP address
// (127.0.0.0/8, ::1). A name that merely starts like one, such as
// 127.0.0.1.example.com, is not.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
