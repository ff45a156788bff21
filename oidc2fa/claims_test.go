package oidc2fa_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// TestIDTokenNamesTheUser: preferred_username is the userName and email the primary email as
// the store has them when the token is issued; without a primary email there is no email claim.
func TestIDTokenNamesTheUser(t *testing.T) {
	ctx := context.Background()
	t.Run("no primary email", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.mem.Backend().Users.Update(ctx, "acme", e.user.ID, func(u *store.User) error {
			u.Emails = []store.MultiValue{{Value: "ann.other@example.com", Type: "work"}}
			return nil
		})
		require.NoError(t, err)
		_, claims := decodeJWT(t, e.redeem(e.code()))
		assert.Equal(t, "ann@example.com", claims["preferred_username"])
		assert.NotContains(t, claims, "email", "no email is primary")
	})
	t.Run("renamed between the sign-in and the token", func(t *testing.T) {
		e := newEnv(t)
		code := e.code()
		_, err := e.mem.Backend().Users.Update(ctx, "acme", e.user.ID, func(u *store.User) error {
			u.UserName = "ann.lee@example.com"
			return nil
		})
		require.NoError(t, err)
		_, claims := decodeJWT(t, e.redeem(code))
		assert.Equal(t, "ann.lee@example.com", claims["preferred_username"])
		assert.Equal(t, e.user.ID, claims["sub"], "sub does not change")
	})
}

// TestTokenRefusedForAUserGoneSinceTheSignIn: a user deactivated or deleted between the second
// factor and the token request gets no token.
func TestTokenRefusedForAUserGoneSinceTheSignIn(t *testing.T) {
	ctx := context.Background()
	for name, gone := range map[string]func(e *env){
		"deactivated": func(e *env) {
			_, err := e.mem.Backend().Users.Update(ctx, "acme", e.user.ID, func(u *store.User) error {
				u.Active = false
				return nil
			})
			require.NoError(t, err)
		},
		"deleted": func(e *env) { require.NoError(t, e.mem.Backend().Users.Delete(ctx, "acme", e.user.ID)) },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			code := e.code()
			gone(e)
			requireTokenError(t, e.postToken(e.tokenForm(code), nil), http.StatusBadRequest, "invalid_grant")
		})
	}
}

// TestDiscoveryListsTheNameClaims: claims_supported names preferred_username and email.
func TestDiscoveryListsTheNameClaims(t *testing.T) {
	e := newEnv(t)
	_, doc := discover(t, e.handler, "acme")
	assert.Subset(t, doc["claims_supported"], []any{"preferred_username", "email"})
}
