package main

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"

	"github.com/dblkit/go-topgg/plugin"
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

// nameVariable fills in the environment variable of a plugin.ConfigError that
// names a Config field but no variable: Config.Validate reports the field of
// a rule that ties two settings (a webhook address with no secret), and the
// field that is missing was never read, so LoadEnv could not name it. The
// operator sets variables, so the message names the variable (the tag of the
// field), as every other configuration error of the bot does.
func nameVariable(err error) error {
	var ce *plugin.ConfigError
	if !errors.As(err, &ce) || ce.Variable != "" {
		return err
	}
	name, ok := strings.CutPrefix(ce.Field, "Config.")
	if !ok {
		return err
	}
	if f, ok := reflect.TypeFor[plugin.Config]().FieldByName(name); ok {
		if tag, _, _ := strings.Cut(f.Tag.Get("env"), ","); tag != "" {
			ce.Variable = strings.TrimSpace(tag)
		}
	}
	return err
}
