package webhook_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dblkit/go-topgg/topgg/webhook"
)

// An empty key is a key anyone has: Verify given an empty secret (an unset
// variable) must refuse, never accept a body signed with "".
func TestVerifyRefusesEmptyOrMissingSecrets(t *testing.T) {
	t.Parallel()
	body := []byte(voteBody)
	forged := webhook.Sign("", now, body)
	for name, secrets := range map[string][]webhook.Secret{
		"only empty":        {""},
		"empty beside good": {secretA, ""},
		"trailing newline":  {secretA + "\n"},
		"without whs_":      {secretA, "4f1c2e9a"},
		"none":              nil,
	} {
		err := webhook.Verify(forged, body, now, 0, secrets...)
		assert.Error(t, err, name)
		if len(secrets) == 0 {
			assert.ErrorIs(t, err, webhook.ErrNoSecret, name)
		} else {
			assert.ErrorIs(t, err, webhook.ErrMalformedSecret, name)
		}
	}
	assert.NoError(t, webhook.Verify(webhook.Sign(secretA, now, body), body, now, 0, secretA))
}
