package topgg_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

func TestRetryableTable(t *testing.T) {
	t.Parallel()
	api := func(status int) *topgg.APIError {
		return &topgg.APIError{Op: "GET /v1/projects/@me", StatusCode: status}
	}
	req := func(err error) *topgg.RequestError {
		return &topgg.RequestError{Op: "GET /v1/projects/@me", Attempts: 4, Err: err}
	}
	wrap := func(err error) error { return fmt.Errorf("poll: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"foreign error", errors.New("disk full"), false},
		{"io.EOF alone", io.EOF, false},
		{"validation", &topgg.ValidationError{Field: "title", Problem: "empty", Rule: "3-100"}, false},
		{"decode of a 2xx", &topgg.DecodeError{Op: "GET /v1/projects/@me", Status: 200, Err: errors.New("bad json")}, false},
		{"pagination", &topgg.PaginationError{Op: "GET /v1/projects/@me/votes", Page: 3, Problem: "cycle"}, false},

		{"connection refused", req(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true},
		{"connection reset mid-body", req(io.ErrUnexpectedEOF), true},
		{"http.Client timeout", req(fmt.Errorf("awaiting headers: %w", context.DeadlineExceeded)), true},
		{"refused redirect", req(fmt.Errorf("%w: https://a to http://a", topgg.ErrUnsafeRedirect)), false},
		{"untrusted certificate", req(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), false},
		{"certificate for another host", req(x509.HostnameError{Host: "top.gg"}), false},
		{"request cancelled", req(context.Canceled), false},

		{"400", api(400), false},
		{"401", api(401), false},
		{"403", api(403), false},
		{"404", api(404), false},
		{"408", api(408), true},
		{"409", api(409), false},
		{"413", api(413), false},
		{"422", api(422), false},
		{"425", api(425), true},
		{"429 without a wait", api(429), true},
		{"500", api(500), true},
		{"501", api(501), false},
		{"502", api(502), true},
		{"503", api(503), true},
		{"504", api(504), true},
		{"505", api(505), false},
		{"599", api(599), true},
		{"418", api(418), false},

		{"429 block", &topgg.RateLimitError{Op: "x", RetryAfter: time.Hour, API: api(429)}, true},
		{"503 block", &topgg.RateLimitError{Op: "x", RetryAfter: time.Hour, API: api(503)}, true},
		{"local block", &topgg.RateLimitError{Op: "x", RetryAfter: time.Hour, Local: true}, true},

		{"ErrRateLimited itself", topgg.ErrRateLimited, true},
		{"ErrNotFound itself", topgg.ErrNotFound, false},
		{"ErrUnauthorized itself", topgg.ErrUnauthorized, false},
		{"ErrPagination itself", topgg.ErrPagination, false},
		{"ErrUnsafeRedirect itself", topgg.ErrUnsafeRedirect, false},
		{"context.Canceled", context.Canceled, false},
		{"context.DeadlineExceeded", context.DeadlineExceeded, false},

		{"wrapped 503", wrap(api(503)), true},
		{"wrapped 422", wrap(api(422)), false},
		{"wrapped block", wrap(&topgg.RateLimitError{Local: true}), true},
		{"wrapped request", wrap(req(io.ErrUnexpectedEOF)), true},
		{"cancelled around a 503", fmt.Errorf("%w after %w", context.Canceled, api(503)), false},
		{"joined 503 and validation: the first decides", errors.Join(api(503), &topgg.ValidationError{}), true},
	} {
		require.Equal(t, tc.want, topgg.Retryable(tc.err), tc.name)
	}
}
