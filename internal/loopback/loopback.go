// Package loopback tells a host on this machine from one elsewhere: the one
// rule behind "plain http only to this machine" and "no interval floors for a
// fake on this machine".
package loopback

import "net"

// Host reports whether host (a URL's Hostname(), without port or brackets)
// is this machine: "localhost" or a loopback IP address (127.0.0.0/8, ::1).
// A name that merely starts like one, such as 127.0.0.1.example.com, is not.
func Host(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
