package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/dblkit/go-topgg/topgg/webhook"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// signRaw signs body with ts exactly as given, independently of Sign.
func signRaw(secret webhook.Secret, ts, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + body))
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}
