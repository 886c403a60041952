package webhook

import (
	"bytes"
	"context"
	"net/http"
	"time"
)

// NewRequest returns a POST of body to url as Top.gg sends a v1 delivery:
// JSON, signed with secret at time t (see [Sign]). It is for tests of a
// receiver, this package's [Receiver] or another.
func NewRequest(ctx context.Context, url string, secret Secret, t time.Time, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(secret, t, body))
	return req, nil
}
