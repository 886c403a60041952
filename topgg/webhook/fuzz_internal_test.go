package webhook

import (
	"strings"
	"testing"
	"time"
)

// FuzzParseSignature: the header parser never panics, and what it accepts
// has a decimal timestamp it can check and between 1 and 8 MACs.
func FuzzParseSignature(f *testing.F) {
	body := []byte(`{"type":"webhook.test","data":{}}`)
	at := time.Unix(1770598034, 0)
	for _, seed := range []string{
		Sign("whs_a", at, body),
		"t=1770598034,v1=" + strings.Repeat("ab", 32) + ",v1=" + strings.Repeat("cd", 32),
		" v1=" + strings.Repeat("0", 64) + " , t=0 ",
		"t=,v1=", "t=1", "v1=zz", "t=1,,v1=x", "=,=", ",", "t=999999999999999999,v1=" + strings.Repeat("f", 64),
		"t=1770598034,v2=x,v1=" + strings.Repeat("A", 64),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, h string) {
		s, err := parseSignature(h)
		if err != nil {
			return
		}
		if s.n < 1 || s.n > maxSignatures || s.ts == "" || len(s.ts) > 18 {
			t.Fatalf("accepted %q with %d MACs and timestamp %q", h, s.n, s.ts)
		}
		for _, c := range s.ts {
			if c < '0' || c > '9' {
				t.Fatalf("accepted a timestamp %q that is not decimal", s.ts)
			}
		}
		_, _ = keyring(nil).verify(h, at, func() ([]byte, error) { return body, nil }) // no overflow panic
		if newKeyring([]Secret{"whs_a"}).match(&s, body) && Verify(h, body, time.Unix(s.t, 0), "whs_a") != nil {
			t.Fatalf("the keyring and Verify disagree on %q", h)
		}
	})
}
