package oidc2fa_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// everyoneEnrolled makes the test authenticator report that every user has the factor.
func everyoneEnrolled(e *enrollEnv) { e.auth.Enrolled = func(string, string) bool { return true } }

// freshIDToken signs ann in with both factors now and returns the ID token.
func (e *enrollEnv) freshIDToken() string {
	e.t.Helper()
	return e.redeem(e.code())
}

// requireLoginRequired checks the refusal of a replacement and that no link was made.
func (e *enrollEnv) requireLoginRequired(t *testing.T, form url.Values) {
	t.Helper()
	before := len(e.interactions.created())
	rec := e.postEnroll("acme", form, nil)
	requireTokenError(t, rec, http.StatusBadRequest, "login_required")
	assert.Len(t, e.interactions.created(), before, "no link was made")
}

// TestReenrollNeedsProof: for a user who has the factor, the client's word (its secret) is not
// enough: the enrollment endpoint answers login_required and makes no link.
func TestReenrollNeedsProof(t *testing.T) {
	e := newEnrollEnv(t)
	everyoneEnrolled(e)
	e.requireLoginRequired(t, e.enrollForm())
}

// TestReenrollWithFreshSignIn: with the ID token of a sign-in just made, the link is made and
// its enrollment may replace the factor; the log says a replacement link was made.
func TestReenrollWithFreshSignIn(t *testing.T) {
	e := newEnrollEnv(t)
	everyoneEnrolled(e)
	form := e.enrollForm()
	form.Set("id_token_hint", e.freshIDToken())
	e.clock.Advance(oidc2fa.DefaultReenrollmentMaxAge - time.Second)
	link := e.clientLink(form)
	stored := e.interactions.stored(t)
	require.NotEmpty(t, stored)
	assert.True(t, stored[len(stored)-1].ReplaceFactor, "the link may replace")

	b := e.browser()
	path, page := b.openLink(link)
	q := callback(t, b.decide(path, csrfToken(t, page), "enroll"))
	assert.Equal(t, "complete", q.Get("enrollment"), "the test authenticator replaced the factor")
	assert.Equal(t, []string{"acme/" + e.user.ID}, e.enrolled)
}

// TestFirstEnrollmentMayNotReplace: a client's link for a user without the factor needs no
// proof, and its enrollment may not replace one the user gets meanwhile.
func TestFirstEnrollmentMayNotReplace(t *testing.T) {
	e := newEnrollEnv(t)
	link := e.clientLink(e.enrollForm())
	stored := e.interactions.stored(t)
	require.Len(t, stored, 1)
	assert.False(t, stored[0].ReplaceFactor)

	b := e.browser()
	path, page := b.openLink(link)
	everyoneEnrolled(e) // the user enrolls another way while the page is open
	q := callback(t, b.decide(path, csrfToken(t, page), "enroll"))
	assert.Equal(t, "access_denied", q.Get("error"), "nothing replaced")
	assert.Empty(t, e.enrolled)
}

// TestAdminLinkMayReplace: an administrator's link needs no proof and may replace.
func TestAdminLinkMayReplace(t *testing.T) {
	e := newEnrollEnv(t)
	everyoneEnrolled(e)
	e.adminLink()
	stored := e.interactions.stored(t)
	require.Len(t, stored, 1)
	assert.True(t, stored[0].ReplaceFactor)
}

// TestReenrollProofRefused: every ID token that does not prove a recent sign-in of this user
// through this client is refused with login_required.
func TestReenrollProofRefused(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		proof func(e *enrollEnv) string
	}{
		{"too old", func(e *enrollEnv) string {
			tok := e.freshIDToken()
			e.clock.Advance(oidc2fa.DefaultReenrollmentMaxAge + time.Second)
			return tok
		}},
		{"another user's", func(e *enrollEnv) string {
			_, err := e.mem.Backend().Users.Create(ctx, "acme", store.User{UserName: "carl@example.com", Active: true})
			require.NoError(t, err)
			p := e.authParams()
			p.Set("login_hint", "carl@example.com")
			return e.redeem(e.codeFor(p))
		}},
		{"another client's", func(e *enrollEnv) string {
			secret, other, err := oidc2fa.RegisterClient(ctx, e.mem.Backend().Clients, oidc2fa.ClientSpec{
				Tenant: "acme", Name: "Other", RedirectURIs: []string{testRedirect}})
			require.NoError(t, err)
			p := e.authParams()
			p.Set("client_id", other.ID)
			form := e.tokenForm(e.codeFor(p))
			form.Set("client_id", other.ID)
			form.Set("client_secret", secret)
			rec := e.postToken(form, nil)
			require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
			var resp struct {
				IDToken string `json:"id_token"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
			return resp.IDToken
		}},
		{"a flipped signature byte", func(e *enrollEnv) string {
			tok := e.freshIDToken()
			i := strings.LastIndexByte(tok, '.') + 5
			c := byte('A')
			if tok[i] == 'A' {
				c = 'B'
			}
			return tok[:i] + string(c) + tok[i+1:]
		}},
		{"alg none", func(e *enrollEnv) string {
			tok := e.freshIDToken()
			parts := strings.Split(tok, ".")
			return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + parts[1] + "."
		}},
		{"a key not in the JWKS", func(e *enrollEnv) string {
			tok := e.freshIDToken()
			parts := strings.Split(tok, ".")
			_, priv, err := ed25519.GenerateKey(rand.Reader)
			require.NoError(t, err)
			header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"EdDSA","kid":"stranger","typ":"JWT"}`))
			sig := ed25519.Sign(priv, []byte(header+"."+parts[1]))
			return header + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
		}},
		{"garbage", func(*enrollEnv) string { return "not.a.token" }},
		{"another tenant's issuer", func(e *enrollEnv) string {
			tok := e.freshIDToken()
			_, claims := decodeJWT(t, tok)
			claims["iss"] = testBase + "/globex"
			payload, err := json.Marshal(claims)
			require.NoError(t, err)
			signed, err := e.keys.Sign(ctx, "acme", payload)
			require.NoError(t, err)
			return signed
		}},
		{"no auth_time", func(e *enrollEnv) string {
			_, claims := decodeJWT(t, e.freshIDToken())
			delete(claims, "auth_time")
			payload, err := json.Marshal(claims)
			require.NoError(t, err)
			signed, err := e.keys.Sign(ctx, "acme", payload)
			require.NoError(t, err)
			return signed
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnrollEnv(t)
			everyoneEnrolled(e)
			form := e.enrollForm()
			form.Set("id_token_hint", tc.proof(e))
			e.requireLoginRequired(t, form)
		})
	}
}

// TestReenrollmentMaxAge: Config.ReenrollmentMaxAge sets how recent the sign-in must be.
func TestReenrollmentMaxAge(t *testing.T) {
	e := newEnrollEnv(t, func(c *oidc2fa.Config) { c.ReenrollmentMaxAge = 30 * time.Second })
	everyoneEnrolled(e)
	tok := e.freshIDToken()
	e.clock.Advance(31 * time.Second)
	form := e.enrollForm()
	form.Set("id_token_hint", tok)
	e.requireLoginRequired(t, form)

	tok = e.freshIDToken()
	e.clock.Advance(29 * time.Second)
	form.Set("id_token_hint", tok)
	e.clientLink(form)
}

// TestEnrollEndpointRefusesBadText: NUL bytes, invalid UTF-8 and oversized values in the
// enrollment request are invalid_request, and nothing is stored.
func TestEnrollEndpointRefusesBadText(t *testing.T) {
	for name, edit := range map[string]func(url.Values){
		"NUL in login_hint":          func(f url.Values) { f.Set("login_hint", "ann@example.com\x00") },
		"invalid UTF-8 in state":     func(f url.Values) { f.Set("state", "st-\xff") },
		"NUL in redirect_uri":        func(f url.Values) { f.Set("redirect_uri", testRedirect+"\x00") },
		"login_hint of 513 bytes":    func(f url.Values) { f.Set("login_hint", strings.Repeat("a", 513)) },
		"state of 513 bytes":         func(f url.Values) { f.Set("state", strings.Repeat("s", 513)) },
		"invalid UTF-8 in client_id": func(f url.Values) { f.Set("client_id", "client_\xc3") },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnrollEnv(t)
			f := e.enrollForm()
			edit(f)
			requireTokenError(t, e.postEnroll("acme", f, nil), http.StatusBadRequest, "invalid_request")
			assert.Empty(t, e.interactions.created())
		})
	}
}
