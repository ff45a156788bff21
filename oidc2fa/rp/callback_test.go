package rp_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/oidc2fa/rp"
)

// sentinels are the refusals Callback reports with errors.Is.
var sentinels = []error{rp.ErrState, rp.ErrIssuer, rp.ErrExpired, rp.ErrNonce, rp.ErrSignature,
	rp.ErrAudience, rp.ErrInvalidToken}

// TestCallbackRefusesTheResponse alters the provider's redirect back to the RP: every change
// is refused before the code is redeemed.
func TestCallbackRefusesTheResponse(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(q url.Values)
		noCooky bool
		want    error
	}{
		{name: "state tampered", edit: func(q url.Values) { s := q.Get("state"); q.Set("state", string(flip(s[0]))+s[1:]) }, want: rp.ErrState},
		{name: "state of nobody", edit: func(q url.Values) { q.Set("state", "nobody") }, want: rp.ErrState},
		{name: "state missing", edit: func(q url.Values) { q.Del("state") }, want: rp.ErrState},
		{name: "state empty", edit: func(q url.Values) { q.Set("state", "") }, want: rp.ErrState},
		{name: "state twice", edit: func(q url.Values) { q.Add("state", q.Get("state")) }, want: rp.ErrState},
		{name: "another browser", noCooky: true, want: rp.ErrState},
		{name: "iss missing", edit: func(q url.Values) { q.Del("iss") }, want: rp.ErrIssuer},
		{name: "iss wrong", edit: func(q url.Values) { q.Set("iss", "https://evil.example.com/oidc/acme") }, want: rp.ErrIssuer},
		{name: "iss of another tenant", edit: func(q url.Values) { q.Set("iss", strings.TrimSuffix(q.Get("iss"), "acme")+"globex") }, want: rp.ErrIssuer},
		{name: "iss with a slash", edit: func(q url.Values) { q.Set("iss", q.Get("iss")+"/") }, want: rp.ErrIssuer},
		{name: "iss twice", edit: func(q url.Values) { q.Add("iss", q.Get("iss")) }, want: rp.ErrIssuer},
	}
	for _, kind := range sessionKinds {
		t.Run(kind.name, func(t *testing.T) {
			p := newIDP(t, true)
			e := newRP(t, p, kind.make(t, p.clock.Now))
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					f := e.begin(t)
					e.authorize(t, f, "approve")
					cookies := f.cookies
					if tc.noCooky {
						cookies = nil
					}
					hits := p.tokenHits.Load()
					res, _, err := e.finish(f, cookies, tc.edit)
					require.ErrorIs(t, err, tc.want)
					assert.Nil(t, res)
					assert.Equal(t, hits, p.tokenHits.Load(), "the code was not redeemed")
				})
			}
		})
	}
}

// TestCallbackReplay finishes one sign-in twice.
func TestCallbackReplay(t *testing.T) {
	for _, kind := range sessionKinds {
		t.Run(kind.name, func(t *testing.T) {
			p := newIDP(t, true)
			e := newRP(t, p, kind.make(t, p.clock.Now))
			f := e.begin(t)
			e.authorize(t, f, "approve")
			_, _, err := e.finish(f, f.cookies, nil)
			require.NoError(t, err)
			_, _, err = e.finish(f, f.cookies, nil) // the same request, cookie included
			require.ErrorIs(t, err, rp.ErrState)
			assert.EqualValues(t, 1, p.tokenHits.Load(), "the replay never reached the token endpoint")
		})
	}
}

// TestServerSessionsSurviveAnotherBrowser: a callback without the binding cookie does not end
// the sign-in of the browser that has it.
func TestServerSessionsSurviveAnotherBrowser(t *testing.T) {
	p := newIDP(t, true)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
	f := e.begin(t)
	e.authorize(t, f, "approve")
	_, _, err := e.finish(f, nil, nil)
	require.ErrorIs(t, err, rp.ErrState)
	res, _, err := e.finish(f, f.cookies, nil)
	require.NoError(t, err)
	assert.Equal(t, p.user.ID, res.Subject)
}

// TestCallbackProviderErrors: what the provider refuses comes back as an *AuthError.
func TestCallbackProviderErrors(t *testing.T) {
	for _, decision := range []string{"deny", "cancel"} {
		t.Run(decision, func(t *testing.T) {
			p := newIDP(t, false)
			e := newRP(t, p, sessionKinds[1].make(t, p.clock.Now))
			f := e.begin(t)
			e.authorize(t, f, decision)
			_, _, err := e.finish(f, f.cookies, nil)
			var ae *rp.AuthError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, "access_denied", ae.Code)
			assert.NotEmpty(t, ae.Description)
			assert.False(t, ae.Enrollment, "a sign-in, not an enrollment")
			assert.Contains(t, err.Error(), "access_denied")
			for _, s := range sentinels {
				assert.NotErrorIs(t, err, s)
			}
			assert.Zero(t, p.tokenHits.Load())
		})
	}

	t.Run("error with a forged state", func(t *testing.T) {
		p := newIDP(t, false)
		e := newRP(t, p, sessionKinds[1].make(t, p.clock.Now))
		f := e.begin(t)
		e.authorize(t, f, "deny")
		_, _, err := e.finish(f, f.cookies, func(q url.Values) { q.Set("state", "forged") })
		require.ErrorIs(t, err, rp.ErrState, "state is checked before error")
	})

	t.Run("wrong client secret", func(t *testing.T) {
		p := newIDP(t, true)
		e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now), func(c *rp.Config) { c.ClientSecret = "secret_wrong" })
		_, err := e.flow(t)
		var ae *rp.AuthError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, "invalid_client", ae.Code)
	})
}

// leakySessions is a broken Sessions that gives the same session twice: the provider must
// still refuse the second redemption of the code.
type leakySessions struct {
	rp.Sessions
	mu    sync.Mutex
	taken map[string]rp.Session
}

func (l *leakySessions) Take(w http.ResponseWriter, r *http.Request, state string) (rp.Session, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.taken[state]; ok {
		return s, nil
	}
	s, err := l.Sessions.Take(w, r, state)
	if err == nil {
		l.taken[state] = s
	}
	return s, err
}

func TestCodeReplay(t *testing.T) {
	p := newIDP(t, true)
	leaky := &leakySessions{Sessions: sessionKinds[0].make(t, p.clock.Now), taken: map[string]rp.Session{}}
	e := newRP(t, p, leaky)
	f := e.begin(t)
	e.authorize(t, f, "approve")
	_, _, err := e.finish(f, f.cookies, nil)
	require.NoError(t, err)
	_, _, err = e.finish(f, f.cookies, nil)
	var ae *rp.AuthError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "invalid_grant", ae.Code)
	assert.EqualValues(t, 2, p.tokenHits.Load(), "the token endpoint was called twice")
}

// TestExpiredToken moves the RP's clock past the ID token's exp (an hour after it was issued).
func TestExpiredToken(t *testing.T) {
	tests := []struct {
		name    string
		advance time.Duration
		want    error
	}{
		{"within the leeway", time.Hour + rp.DefaultLeeway - time.Second, nil},
		{"expired", time.Hour + rp.DefaultLeeway, rp.ErrExpired},
		{"long expired", 48 * time.Hour, rp.ErrExpired},
		{"the RP's clock behind, within the leeway", -rp.DefaultLeeway, nil},
		{"the RP's clock far behind", -rp.DefaultLeeway - time.Second, rp.ErrInvalidToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newIDP(t, true)
			e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
			e.clock.Advance(tc.advance)
			res, err := e.flow(t)
			if tc.want == nil {
				require.NoError(t, err)
				assert.Equal(t, p.user.ID, res.Subject)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}

	t.Run("custom leeway", func(t *testing.T) {
		p := newIDP(t, true)
		e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now), func(c *rp.Config) { c.Leeway = time.Second })
		e.clock.Advance(time.Hour + time.Second)
		_, err := e.flow(t)
		require.ErrorIs(t, err, rp.ErrExpired)
	})
}

// TestIDTokenChecks hands the RP ID tokens of the test's making in place of the provider's.
func TestIDTokenChecks(t *testing.T) {
	_, stranger, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)

	type forger = func(p *idp, c map[string]any) string
	set := func(name string, v any) forger {
		return func(p *idp, c map[string]any) string { c[name] = v; return p.sign(c) }
	}
	del := func(name string) forger {
		return func(p *idp, c map[string]any) string { delete(c, name); return p.sign(c) }
	}
	at := func(d time.Duration) float64 { return float64(start.Add(d).Unix()) }
	tests := []struct {
		name  string
		forge forger
		want  error
	}{
		{"re-signed as is", func(p *idp, c map[string]any) string { return p.sign(c) }, nil},
		{"signed by hand", func(p *idp, c map[string]any) string { return p.signAs(c, nil) }, nil},
		{"no typ", func(p *idp, c map[string]any) string { return p.signAs(c, map[string]any{"typ": nil}) }, nil},

		{"nonce of another sign-in", set("nonce", "another-nonce"), rp.ErrNonce},
		{"nonce missing", del("nonce"), rp.ErrNonce},
		{"nonce not a string", set("nonce", 42), rp.ErrNonce},

		{"aud another client", set("aud", "client_other"), rp.ErrAudience},
		{"aud missing", del("aud"), rp.ErrAudience},
		{"aud this client and another", func(p *idp, c map[string]any) string {
			c["aud"] = []any{p.clientID, "client_other"}
			return p.sign(c)
		}, rp.ErrAudience},
		{"aud an array of this client", func(p *idp, c map[string]any) string {
			c["aud"] = []any{p.clientID}
			return p.sign(c)
		}, nil},
		{"aud empty array", set("aud", []any{}), rp.ErrAudience},
		{"azp another client", set("azp", "client_other"), rp.ErrAudience},
		{"azp this client", func(p *idp, c map[string]any) string { c["azp"] = p.clientID; return p.sign(c) }, nil},

		{"iss another", set("iss", "https://evil.example.com/oidc/acme"), rp.ErrIssuer},
		{"iss missing", del("iss"), rp.ErrIssuer},

		{"exp missing", del("exp"), rp.ErrInvalidToken},
		{"exp not a number", set("exp", "tomorrow"), rp.ErrInvalidToken},
		{"exp past", set("exp", at(-rp.DefaultLeeway)), rp.ErrExpired},
		{"exp past within leeway", set("exp", at(-rp.DefaultLeeway+time.Second)), nil},
		{"iat missing", del("iat"), rp.ErrInvalidToken},
		{"iat in the future", set("iat", at(rp.DefaultLeeway+time.Second)), rp.ErrInvalidToken},
		{"iat in the future within leeway", set("iat", at(rp.DefaultLeeway)), nil},
		{"nbf in the future", set("nbf", at(2*rp.DefaultLeeway)), rp.ErrInvalidToken},
		{"nbf past", set("nbf", at(-time.Minute)), nil},
		{"sub missing", del("sub"), rp.ErrInvalidToken},
		{"sub empty", set("sub", ""), rp.ErrInvalidToken},
		{"amr not an array", set("amr", "pwd"), rp.ErrInvalidToken},
		{"auth_time not a number", set("auth_time", "now"), rp.ErrInvalidToken},

		{"signed by a foreign key under the provider's kid", func(p *idp, c map[string]any) string {
			return signEd25519(stranger, map[string]any{"alg": "EdDSA", "kid": p.kid}, c)
		}, rp.ErrSignature},
		{"signed by a foreign key under its own kid", func(p *idp, c map[string]any) string {
			return signEd25519(stranger, map[string]any{"alg": "EdDSA", "kid": "stranger"}, c)
		}, rp.ErrSignature},
		{"alg none", func(p *idp, c map[string]any) string {
			return unsigned(map[string]any{"alg": "none", "kid": p.kid}, c)
		}, rp.ErrSignature},
		{"alg none, no kid", func(p *idp, c map[string]any) string {
			return unsigned(map[string]any{"alg": "none"}, c)
		}, rp.ErrSignature},
		{"HS256 keyed with the provider's public key", func(p *idp, c map[string]any) string {
			return signHS256(p.priv.Public().(ed25519.PublicKey), map[string]any{"alg": "HS256", "kid": p.kid}, c)
		}, rp.ErrSignature},
		{"RS256", func(p *idp, c map[string]any) string {
			return signRS256(rsaKey, map[string]any{"alg": "RS256", "kid": p.kid}, c)
		}, rp.ErrSignature},
		{"a good EdDSA signature under alg HS256", func(p *idp, c map[string]any) string {
			return p.signAs(c, map[string]any{"alg": "HS256"})
		}, rp.ErrSignature},
		{"a good EdDSA signature under alg none", func(p *idp, c map[string]any) string {
			return p.signAs(c, map[string]any{"alg": "none"})
		}, rp.ErrSignature},
		{"EdDSA without kid", func(p *idp, c map[string]any) string {
			return p.signAs(c, map[string]any{"kid": nil})
		}, rp.ErrSignature},
		{"claims swapped under a valid signature", func(p *idp, c map[string]any) string {
			tok := p.sign(c)
			c["sub"] = "user_someone_else"
			parts := strings.Split(tok, ".")
			return parts[0] + "." + b64JSON(c) + "." + parts[2]
		}, rp.ErrSignature},
		{"signature cut", func(p *idp, c map[string]any) string {
			tok := p.sign(c)
			return tok[:strings.LastIndexByte(tok, '.')+1]
		}, rp.ErrSignature},
		{"typ of an access token", func(p *idp, c map[string]any) string {
			return p.signAs(c, map[string]any{"typ": "at+jwt"})
		}, rp.ErrInvalidToken},
		{"a critical extension", func(p *idp, c map[string]any) string {
			return p.signAs(c, map[string]any{"crit": []string{"exp"}, "exp": 1})
		}, rp.ErrInvalidToken},
		{"not a JWS", func(*idp, map[string]any) string { return "not-a-token" }, rp.ErrInvalidToken},
		{"four parts", func(p *idp, c map[string]any) string { return p.sign(c) + ".x" }, rp.ErrInvalidToken},
		{"empty", func(*idp, map[string]any) string { return "" }, rp.ErrInvalidToken},
		{"claims not an object", func(p *idp, c map[string]any) string {
			return signEd25519(p.priv, map[string]any{"alg": "EdDSA", "kid": p.kid}, nil)
		}, rp.ErrInvalidToken},
	}
	p := newIDP(t, true)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p.setForge(t, func(c map[string]any) string { return tc.forge(p, c) })
			res, err := e.flow(t)
			if tc.want == nil {
				require.NoError(t, err)
				assert.Equal(t, p.user.ID, res.Subject)
				return
			}
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, res)
			for _, s := range sentinels {
				if s != tc.want {
					assert.NotErrorIs(t, err, s, "only %v", tc.want)
				}
			}
			var ae *rp.AuthError
			assert.False(t, errors.As(err, &ae))
		})
	}
}

// TestCallbackLockedUntil: a sign-in that ends on a locked factor gives AuthError.LockedUntil to
// a client that must push its sign-ins, and nothing to any other.
func TestCallbackLockedUntil(t *testing.T) {
	for _, pushedOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("pushedOnly=%t", pushedOnly), func(t *testing.T) {
			p := newIDP(t, false, withPAR)
			if pushedOnly {
				_, err := oidc2fa.SetRequirePAR(t.Context(), p.backend.Clients, "acme", p.clientID, true)
				require.NoError(t, err)
			}
			e := newRP(t, p, sessionKinds[1].make(t, p.clock.Now))
			f := e.begin(t)
			e.authorize(t, f, "lock")
			_, _, err := e.finish(f, f.cookies, nil)
			var ae *rp.AuthError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, rp.AccessDenied, ae.Code)
			if !pushedOnly {
				assert.True(t, ae.LockedUntil.IsZero(), "told %v", ae.LockedUntil)
				return
			}
			assert.Equal(t, p.clock.Now().Add(authtest.LockFor).UTC().Truncate(time.Second), ae.LockedUntil)
			assert.Contains(t, ae.Description, "locked")
		})
	}
}
