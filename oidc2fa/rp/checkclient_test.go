package rp_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/rp"
)

func TestCheckClient(t *testing.T) {
	p := newIDP(t, true)
	other := newIDP(t, true) // a client of another provider: unknown to p
	for _, method := range []rp.AuthMethod{rp.ClientSecretPost, rp.ClientSecretBasic} {
		for _, tt := range []struct {
			name           string
			clientID       string
			secret         string
			wantClientFail bool
		}{
			{"registered", p.clientID, p.secret, false},
			{"wrong secret", p.clientID, p.secret + "x", true},
			{"truncated secret", p.clientID, p.secret[:len(p.secret)-4], true},
			{"unknown client", other.clientID, other.secret, true},
		} {
			t.Run(string(method)+" "+tt.name, func(t *testing.T) {
				hits := p.tokenHits.Load()
				e := newRP(t, p, sessionKinds[0].make(t, nil), func(c *rp.Config) {
					c.ClientID, c.ClientSecret, c.AuthMethod = tt.clientID, tt.secret, method
				})
				err := e.rp.CheckClient(context.Background())
				assert.Equal(t, hits+1, p.tokenHits.Load(), "one token request")
				if !tt.wantClientFail {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, rp.ErrClient)
				var ae *rp.AuthError
				require.True(t, errors.As(err, &ae))
				assert.Equal(t, "invalid_client", ae.Code)
			})
		}
	}

	t.Run("the provider went away", func(t *testing.T) {
		e := newRP(t, other, sessionKinds[0].make(t, nil))
		other.srv.Close()
		err := e.rp.CheckClient(context.Background())
		require.Error(t, err)
		assert.NotErrorIs(t, err, rp.ErrClient)
	})

	t.Run("a sign-in still works after the check", func(t *testing.T) {
		e := newRP(t, p, sessionKinds[0].make(t, nil))
		require.NoError(t, e.rp.CheckClient(context.Background()))
		res, err := e.flow(t)
		require.NoError(t, err)
		assert.Equal(t, p.user.ID, res.Subject)
	})
}
