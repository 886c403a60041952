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

// TestNewRequestRefusesEmptySecret: NewRequest will not sign with a key
// anyone has (an unset variable), nor with one a Receiver would refuse for
// its white space, and its error does not quote the secret.
func TestNewRequestRefusesEmptySecret(t *testing.T) {
	t.Parallel()
	for _, secret := range []webhook.Secret{"", "whs_SEKRIT\n", "whs_SEK RIT"} {
		req, err := webhook.NewRequest(t.Context(), "http://127.0.0.1/hook", secret, now, []byte(voteBody))
		assert.ErrorIs(t, err, webhook.ErrMalformedSecret, "%q", secret)
		assert.Nil(t, req)
		if err != nil {
			assert.NotContains(t, err.Error(), "SEK")
		}
	}
	req, err := webhook.NewRequest(t.Context(), "http://127.0.0.1/hook", secretA, now, []byte(voteBody))
	assert.NoError(t, err)
	assert.NotNil(t, req)
}
