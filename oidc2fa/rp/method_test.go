package rp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/oidc2fa/rp"
)

// TestResultMethod names the method from the amr visid issues for each: a picture password,
// a device-bound passkey, a synced passkey, and none it knows.
func TestResultMethod(t *testing.T) {
	for _, c := range []struct {
		amr  []string
		want string
	}{
		{[]string{"pwd"}, rp.MethodPicture},
		{[]string{"hwk", "mfa"}, rp.MethodPasskey},
		{[]string{"swk", "mfa"}, rp.MethodPasskey},
		{[]string{"otp"}, ""},
		{nil, ""},
	} {
		assert.Equal(t, c.want, (&rp.Result{AMR: c.amr}).Method(), "amr %v", c.amr)
	}
}
