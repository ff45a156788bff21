package rp_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/rp"
)

// TestFlow runs whole sign-ins against the real provider with both Sessions and both client
// authentication methods.
func TestFlow(t *testing.T) {
	for _, kind := range sessionKinds {
		for _, method := range []rp.AuthMethod{"", rp.ClientSecretPost, rp.ClientSecretBasic} {
			t.Run(kind.name+"/"+string(method), func(t *testing.T) {
				p := newIDP(t, true)
				e := newRP(t, p, kind.make(t, p.clock.Now), func(c *rp.Config) { c.AuthMethod = method })

				f := e.begin(t)
				u, err := url.Parse(f.authURL)
				require.NoError(t, err)
				assert.Equal(t, p.srv.URL+"/oidc/authorize/acme", u.Scheme+"://"+u.Host+u.Path)
				q := u.Query()
				assert.Equal(t, "code", q.Get("response_type"))
				assert.Equal(t, p.clientID, q.Get("client_id"))
				assert.Equal(t, redirectURI, q.Get("redirect_uri"))
				assert.Equal(t, "openid 2fa", q.Get("scope"))
				assert.Equal(t, "S256", q.Get("code_challenge_method"))
				assert.Equal(t, "ann@example.com", q.Get("login_hint"))
				assert.Len(t, q.Get("state"), 43)
				assert.Len(t, q.Get("nonce"), 43)
				assert.Len(t, q.Get("code_challenge"), 43)

				require.Len(t, f.cookies, 1, "one cookie per sign-in")
				c := f.cookies[0]
				assert.True(t, strings.HasPrefix(c.Name, rp.DefaultCookieName+"_"), c.Name)
				assert.True(t, c.HttpOnly)
				assert.Equal(t, http.SameSiteLaxMode, c.SameSite)
				assert.Equal(t, "/", c.Path)
				assert.Equal(t, 600, c.MaxAge)
				assert.True(t, c.Secure, "the login request came over https")

				e.authorize(t, f, "approve")
				assert.Equal(t, q.Get("state"), f.callback.Query().Get("state"))
				assert.Equal(t, p.issuer, f.callback.Query().Get("iss"))

				res, set, err := e.finish(f, f.cookies, nil)
				require.NoError(t, err)
				assert.Equal(t, p.user.ID, res.Subject)
				assert.Equal(t, "ann@example.com", res.LoginHint)
				assert.Equal(t, []string{"test"}, res.AMR)
				assert.Equal(t, start, res.AuthTime)
				assert.Equal(t, p.clientID, res.Claims["aud"])
				assert.Equal(t, p.issuer, res.Claims["iss"])
				assert.Equal(t, q.Get("nonce"), res.Claims["nonce"])
				assert.Equal(t, "EdDSA", headerOf(res.IDToken)["alg"])

				require.Len(t, set, 1, "Callback clears the sign-in's cookie")
				assert.Equal(t, c.Name, set[0].Name)
				assert.Negative(t, set[0].MaxAge)

				assert.EqualValues(t, 1, p.tokenHits.Load())
				assert.EqualValues(t, 1, p.jwksHits.Load())
			})
		}
	}
}

// recordingSessions remembers what AuthCodeURL saves.
type recordingSessions struct {
	rp.Sessions
	mu    sync.Mutex
	saved []rp.Session
}

func (r *recordingSessions) Save(w http.ResponseWriter, req *http.Request, s rp.Session) error {
	r.mu.Lock()
	r.saved = append(r.saved, s)
	r.mu.Unlock()
	return r.Sessions.Save(w, req, s)
}

func TestAuthCodeURL(t *testing.T) {
	p := newIDP(t, true)
	rec := &recordingSessions{Sessions: sessionKinds[0].make(t, p.clock.Now)}
	e := newRP(t, p, rec)

	a, b := e.begin(t), e.begin(t)
	require.Len(t, rec.saved, 2)
	unreserved := regexp.MustCompile(`^[A-Za-z0-9\-._~]{43,128}$`)
	for i, f := range []*flight{a, b} {
		s := rec.saved[i]
		q := mustQuery(t, f.authURL)
		assert.Equal(t, s.State, q.Get("state"))
		assert.Equal(t, s.Nonce, q.Get("nonce"))
		assert.Equal(t, "ann@example.com", s.LoginHint)
		assert.Regexp(t, unreserved, s.Verifier)
		sum := sha256.Sum256([]byte(s.Verifier))
		assert.Equal(t, base64.RawURLEncoding.EncodeToString(sum[:]), q.Get("code_challenge"))
		for _, v := range []string{s.State, s.Nonce, s.Verifier} {
			raw, err := base64.RawURLEncoding.DecodeString(v)
			require.NoError(t, err)
			assert.Len(t, raw, 32, "256 bits")
		}
	}
	assert.NotEqual(t, rec.saved[0].State, rec.saved[1].State)
	assert.NotEqual(t, rec.saved[0].Nonce, rec.saved[1].Nonce)
	assert.NotEqual(t, rec.saved[0].Verifier, rec.saved[1].Verifier)

	_, err := e.rp.AuthCodeURL(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), "")
	assert.Error(t, err, "the second factor needs the first factor's user")
}

func mustQuery(t *testing.T, s string) url.Values {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u.Query()
}

// TestKeyRotation rotates the provider's keys between sign-ins: the RP fetches the JWKS again
// for the new kid, at most once per JWKSRefreshInterval, without a restart.
func TestKeyRotation(t *testing.T) {
	ctx := context.Background()
	p := newIDP(t, true)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))

	first, err := e.flow(t)
	require.NoError(t, err)
	assert.Equal(t, p.kid, headerOf(first.IDToken)["kid"])
	_, err = e.flow(t)
	require.NoError(t, err)
	assert.EqualValues(t, 1, p.jwksHits.Load(), "the JWKS is cached")

	newKids, err := p.keys.Rotate(ctx)
	require.NoError(t, err)
	require.Len(t, newKids, 1)
	newKid := newKids[0]
	e.clock.Advance(rp.JWKSRefreshInterval)
	second, err := e.flow(t)
	require.NoError(t, err, "a new kid makes the RP fetch the JWKS again")
	assert.Equal(t, newKid, headerOf(second.IDToken)["kid"])
	assert.EqualValues(t, 2, p.jwksHits.Load())
	_, err = e.flow(t)
	require.NoError(t, err)
	assert.EqualValues(t, 2, p.jwksHits.Load())

	// The retired key is still published: tokens it signed still verify.
	p.setForge(t, func(claims map[string]any) string { return p.signAs(claims, nil) })
	_, err = e.flow(t)
	require.NoError(t, err)
	assert.EqualValues(t, 2, p.jwksHits.Load())

	// Forged kids cannot make the RP hammer the provider: one fetch per interval at most.
	_, stranger, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	p.setForge(t, func(claims map[string]any) string {
		return signEd25519(stranger, map[string]any{"alg": "EdDSA", "kid": "unknown-kid"}, claims)
	})
	for range 3 {
		_, err = e.flow(t)
		require.ErrorIs(t, err, rp.ErrSignature)
	}
	assert.EqualValues(t, 2, p.jwksHits.Load(), "fetched less than JWKSRefreshInterval ago")
	e.clock.Advance(rp.JWKSRefreshInterval)
	for range 3 {
		_, err = e.flow(t)
		require.ErrorIs(t, err, rp.ErrSignature)
	}
	assert.EqualValues(t, 3, p.jwksHits.Load())
}

// TestJWKSCache checks that the JWKS is fetched again after its max-age, and that the cached
// keys keep working while the provider's JWKS is down.
func TestJWKSCache(t *testing.T) {
	p := newIDP(t, true)
	e := newRP(t, p, sessionKinds[1].make(t, p.clock.Now))
	_, err := e.flow(t)
	require.NoError(t, err)
	assert.EqualValues(t, 1, p.jwksHits.Load())

	e.clock.Advance(5 * time.Minute) // the provider's max-age
	_, err = e.flow(t)
	require.NoError(t, err)
	assert.EqualValues(t, 2, p.jwksHits.Load(), "stale after max-age")

	p.jwksDown.Store(true)
	e.clock.Advance(5 * time.Minute)
	_, err = e.flow(t)
	require.NoError(t, err, "a failed refresh keeps the cached keys")
	assert.EqualValues(t, 3, p.jwksHits.Load())
	_, err = e.flow(t)
	require.NoError(t, err)
	assert.EqualValues(t, 3, p.jwksHits.Load(), "no retry within JWKSRefreshInterval")

	_, err = p.keys.Rotate(context.Background())
	require.NoError(t, err)
	e.clock.Advance(rp.JWKSRefreshInterval)
	_, err = e.flow(t)
	require.Error(t, err, "a new kid and no JWKS: nothing can verify the token")
	assert.NotErrorIs(t, err, rp.ErrSignature, "an outage is not a bad signature")
	_, err = e.flow(t)
	require.Error(t, err)
	assert.NotErrorIs(t, err, rp.ErrSignature, "still an outage, within JWKSRefreshInterval")
	assert.EqualValues(t, 4, p.jwksHits.Load())

	p.jwksDown.Store(false)
	e.clock.Advance(rp.JWKSRefreshInterval)
	_, err = e.flow(t)
	require.NoError(t, err)
}
