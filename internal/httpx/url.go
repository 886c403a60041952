package httpx

import "net/url"

// urlMark replaces the user info of a shown URL: url.URL.Redacted's mark.
const urlMark = "xxxxx"

// RedactURL returns u as a message may show it: the user info replaced by "xxxxx"
// (a password, and a user name too: "redis://secret@host", the form of Redis
// before ACLs, puts the password there, and a proxy's user name is half its
// credentials); the query left out (its parameters may hold keys), marked by
// "?..."; the fragment left out.
func RedactURL(u *url.URL) string {
	v := *u
	v.RawQuery, v.Fragment, v.RawFragment, v.ForceQuery = "", "", "", false
	if u.User != nil {
		v.User = url.User(urlMark)
	}
	s := v.String()
	if u.RawQuery != "" {
		s += "?..."
	}
	return s
}

// RedactRawURL is [RedactURL] for a string. One that does not parse is shown as "the
// URL": without a host, a password may sit anywhere in it.
func RedactRawURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the URL"
	}
	return RedactURL(u)
}
