package rp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/rp"
)

// TestCheckRedirectURI: with a provider that offers pushed requests, a registered redirect URI
// passes (even with DisablePAR), an unregistered one is ErrRedirectURI with the provider's
// answer; without pushed requests the check cannot be made.
func TestCheckRedirectURI(t *testing.T) {
	p := newIDP(t, true, withPAR)
	sessions, err := rp.NewServerSessions(rp.ServerSessionsConfig{})
	require.NoError(t, err)

	assert.NoError(t, newRP(t, p, sessions).rp.CheckRedirectURI(t.Context()))
	assert.NoError(t, newRP(t, p, sessions, func(c *rp.Config) { c.DisablePAR = true }).rp.CheckRedirectURI(t.Context()))

	err = newRP(t, p, sessions, func(c *rp.Config) { c.RedirectURI = "http://127.0.0.1:18082/callback" }).rp.CheckRedirectURI(t.Context())
	require.ErrorIs(t, err, rp.ErrRedirectURI)
	var ae *rp.AuthError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "invalid_request", ae.Code)

	noPAR := newIDP(t, true)
	assert.ErrorIs(t, newRP(t, noPAR, sessions).rp.CheckRedirectURI(t.Context()), rp.ErrCannotCheck)
}
