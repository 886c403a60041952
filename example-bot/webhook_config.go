package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// checkWebhookAddr returns what is wrong with TOPGG_WEBHOOK_ADDR, or "": it
// must be host:port or :port with a port from 0 to 65535 (0 picks a free
// one, which the log says), so that a typo stops the bot at once instead of
// failing the receiver once the bot is online.
func checkWebhookAddr(addr string) string {
	if addr == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Sprintf("%q is not host:port or :port, such as :8080", addr)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || strconv.FormatUint(n, 10) != port {
		return fmt.Sprintf("%q: the port is not a number from 0 to 65535", addr)
	}
	if strings.ContainsFunc(host, func(r rune) bool { return r <= ' ' || r == '/' }) {
		return fmt.Sprintf("%q: the host holds white space or a slash", addr)
	}
	return ""
}
