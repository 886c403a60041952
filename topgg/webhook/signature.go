package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers of a v1 delivery: the signature, "t=<unix seconds>,v1=<hex
// HMAC-SHA256>", and a trace id for Top.gg's support.
const (
	SignatureHeader = "X-Topgg-Signature"
	TraceHeader     = "X-Topgg-Trace"
)

const (
	// tolerance is how far a signature's time may be from now, either way:
	// the 5 minutes of Top.gg's documentation.
	tolerance = 5 * time.Minute
	// Bounds of the signature header; Top.gg sends one entry of 64 hex digits.
	maxSignatureHeader = 1024
	maxSignatures      = 8
)

// signature is a parsed x-topgg-signature header. ts is the timestamp as
// sent: the MAC covers these exact digits.
type signature struct {
	t    int64
	ts   string
	macs [maxSignatures][sha256.Size]byte
	n    int
}

// parseSignature parses "t=<unix>,v1=<hex>[,v1=<hex>...]", parts in any
// order; keys other than t and v1 (a future scheme) are ignored.
func parseSignature(h string) (signature, error) {
	var s signature
	fail := func(problem string) (signature, error) {
		return s, fmt.Errorf("%w: %s", ErrMalformedSignature, problem)
	}
	if len(h) > maxSignatureHeader {
		return fail(fmt.Sprintf("longer than %d bytes", maxSignatureHeader))
	}
	for part := range strings.SplitSeq(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case !ok:
			return fail("a part is not key=value")
		case k == "t":
			// One, of 1 to 18 digits, no sign: any date of this era, and no overflow.
			t, err := strconv.ParseUint(v, 10, 64)
			if s.ts != "" || err != nil || len(v) > 18 {
				return fail("not one timestamp of 1 to 18 decimal digits")
			}
			s.t, s.ts = int64(t), v
		case k != "v1":
		case s.n == maxSignatures:
			return fail(fmt.Sprintf("more than %d v1 signatures", maxSignatures))
		default:
			// Appending to the array's slice: a longer value cannot overflow it.
			if _, err := hex.AppendDecode(s.macs[s.n][:0], []byte(v)); err != nil || len(v) != 2*sha256.Size {
				return fail(fmt.Sprintf("a v1 signature is not %d hex digits", 2*sha256.Size))
			}
			s.n++
		}
	}
	if s.ts == "" || s.n == 0 {
		return fail("want t=<unix seconds>,v1=<hex>")
	}
	return s, nil
}

// keyring signs with a set of secrets: each function returns the MAC of
// "<ts>.<body>". The keys live only in closures, which no formatting prints.
type keyring []func(ts string, body []byte) []byte

func newKeyring(secrets []Secret) keyring {
	k := make(keyring, len(secrets))
	for i, s := range secrets {
		key := []byte(s)
		k[i] = func(ts string, body []byte) []byte {
			h := hmac.New(sha256.New, key)
			h.Write([]byte(ts + "."))
			h.Write(body)
			return h.Sum(nil)
		}
	}
	return k
}

// match reports whether any secret signed "<ts>.<body>" with any of the
// signature's MACs, each compared in constant time.
func (k keyring) match(s *signature, body []byte) bool {
	for _, mac := range k {
		sum, ok := mac(s.ts, body), false
		for _, m := range s.macs[:s.n] {
			ok = hmac.Equal(sum, m[:]) || ok
		}
		if ok { // no MAC of the other secrets once one signed it
			return true
		}
	}
	return false
}

// verify checks a signature header at now and returns the body read reads;
// one outside the tolerance is refused before reading.
func (k keyring) verify(header string, now time.Time, read func() ([]byte, error)) ([]byte, error) {
	sig, err := parseSignature(header)
	if err != nil {
		return nil, err
	}
	if d := now.Sub(time.Unix(sig.t, 0)); d.Abs() > tolerance {
		return nil, fmt.Errorf("%w: %s from now (tolerance %s)", ErrTimestamp, d.Truncate(time.Second), tolerance)
	}
	body, err := read()
	if err != nil {
		return nil, err
	}
	if !k.match(&sig, body) {
		return nil, ErrSignatureMismatch
	}
	return body, nil
}

// Verify checks a v1 delivery's signature header and raw body at now: nil when
// one of secrets signed it, else [ErrNoSignature], [ErrMalformedSignature],
// [ErrTimestamp] or [ErrSignatureMismatch]; a bad secret is a *topgg.ConfigError.
func Verify(header string, body []byte, now time.Time, secrets ...Secret) error {
	if len(secrets) == 0 {
		return bad("webhook.Verify secrets", "none given")
	}
	for i, s := range secrets {
		if problem := checkV1Secret(s); problem != "" {
			return badItem(i, len(secrets), problem)
		}
	}
	if header == "" {
		return ErrNoSignature
	}
	_, err := newKeyring(secrets).verify(header, now, func() ([]byte, error) { return body, nil })
	return err
}

// Sign returns the x-topgg-signature value Top.gg would send for body signed
// with secret at time t, for tests of a receiver.
func Sign(secret Secret, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(newKeyring([]Secret{secret})[0](ts, body))
}

// NewRequest returns a POST of body to url as Top.gg sends a v1 delivery,
// signed with secret at time t, for tests. A malformed secret is refused (a
// *topgg.ConfigError), never quoted.
func NewRequest(ctx context.Context, url string, secret Secret, t time.Time, body []byte) (*http.Request, error) {
	if !wellFormed(secret) {
		return nil, bad("webhook.NewRequest secret", whiteSpace)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(secret, t, body))
	return req, nil
}
