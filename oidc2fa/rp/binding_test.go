package rp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/oidc2fa/rp"
	"github.com/visid/visid/store"
)

// beginFor runs the RP's login handler for hint.
func (e *rpEnv) beginFor(t *testing.T, hint string) *flight {
	t.Helper()
	rec := httptest.NewRecorder()
	target, err := e.rp.AuthCodeURL(rec, httptest.NewRequest("POST", "https://app.example.com/login", nil), hint)
	require.NoError(t, err)
	return &flight{authURL: target, cookies: rec.Result().Cookies()}
}

// tamper changes the authorization URL's query as a browser can: set adds or replaces
// parameters.
func (f *flight) tamper(t *testing.T, set url.Values) {
	t.Helper()
	u, err := url.Parse(f.authURL)
	require.NoError(t, err)
	q := u.Query()
	for k, v := range set {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	f.authURL = u.String()
}

// addMallory gives the provider a second active user of tenant acme.
func addMallory(t *testing.T, p *idp) *store.User {
	t.Helper()
	u, err := p.backend.Users.Create(context.Background(), "acme", store.User{UserName: "mallory@example.com", Active: true,
		Emails: []store.MultiValue{{Value: "mallory@example.com", Primary: true}}})
	require.NoError(t, err)
	return u
}

// TestTamperedLoginHintWithoutPAR is the attack: the first factor was passed as ann, and the
// browser edits login_hint to another user, mallory, whose second factor the attacker passes.
// Callback refuses with ErrWrongUser and no Result.
func TestTamperedLoginHintWithoutPAR(t *testing.T) {
	for _, kind := range sessionKinds {
		t.Run(kind.name, func(t *testing.T) {
			p := newIDP(t, true)
			addMallory(t, p)
			e := newRP(t, p, kind.make(t, p.clock.Now))
			f := e.begin(t)
			f.tamper(t, url.Values{"login_hint": {"mallory@example.com"}})
			p.authorize(t, f, "approve")
			res, _, err := e.finish(f, f.cookies, nil)
			require.ErrorIs(t, err, rp.ErrWrongUser)
			assert.Nil(t, res)

			// The provider did sign mallory in: only the RP's check stands between her and ann.
			assert.EqualValues(t, 1, p.tokenHits.Load())

			// The sign-in is used up: the same callback again is ErrState.
			_, _, err = e.finish(f, f.cookies, nil)
			assert.ErrorIs(t, err, rp.ErrState)
		})
	}
}

// TestTamperedLoginHintWithPAR: with a pushed request the browser's edits never reach the
// provider: the sign-in stays ann's.
func TestTamperedLoginHintWithPAR(t *testing.T) {
	p := newIDP(t, true, withPAR)
	addMallory(t, p)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
	f := e.begin(t)
	u, err := url.Parse(f.authURL)
	require.NoError(t, err)
	assert.Equal(t, []string{"client_id", "request_uri"}, slices.Sorted(func(yield func(string) bool) {
		for k := range u.Query() {
			if !yield(k) {
				return
			}
		}
	}), "the browser carries nothing but the reference")
	assert.True(t, strings.HasPrefix(u.Query().Get("request_uri"), "urn:ietf:params:oauth:request_uri:"))

	f.tamper(t, url.Values{"login_hint": {"mallory@example.com"}, "redirect_uri": {"https://evil.example/cb"}})
	p.authorize(t, f, "approve")
	res, _, err := e.finish(f, f.cookies, nil)
	require.NoError(t, err)
	assert.Equal(t, p.user.ID, res.Subject, "ann, as pushed")
	assert.Equal(t, "ann@example.com", res.PreferredUsername)
}

// TestPARWithBothAuthMethods: the request is pushed with client_secret_post and
// client_secret_basic alike.
func TestPARWithBothAuthMethods(t *testing.T) {
	for _, method := range []rp.AuthMethod{rp.ClientSecretPost, rp.ClientSecretBasic} {
		t.Run(string(method), func(t *testing.T) {
			p := newIDP(t, true, withPAR, func(c *oidc2fa.Config) { c.RequirePAR = true })
			e := newRP(t, p, sessionKinds[1].make(t, p.clock.Now), func(c *rp.Config) { c.AuthMethod = method })
			res, err := e.flow(t)
			require.NoError(t, err)
			assert.Equal(t, p.user.ID, res.Subject)
		})
	}
}

// TestDisablePAR: Config.DisablePAR sends the request through the browser, and New refuses it
// when the provider requires pushed requests.
func TestDisablePAR(t *testing.T) {
	p := newIDP(t, true, withPAR)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now), func(c *rp.Config) { c.DisablePAR = true })
	f := e.begin(t)
	assert.Contains(t, f.authURL, "login_hint=ann%40example.com")
	assert.NotContains(t, f.authURL, "request_uri")

	strict := newIDP(t, true, withPAR, func(c *oidc2fa.Config) { c.RequirePAR = true })
	_, err := rp.New(context.Background(), rp.Config{
		Issuer: strict.issuer, ClientID: strict.clientID, ClientSecret: strict.secret, RedirectURI: redirectURI,
		Sessions: sessionKinds[0].make(t, strict.clock.Now), DisablePAR: true,
	})
	assert.ErrorIs(t, err, rp.ErrDiscovery)
}

// TestPARRefused: the provider's refusal of a pushed request is an *AuthError, and nothing is
// saved for the browser.
func TestPARRefused(t *testing.T) {
	p := newIDP(t, true, withPAR)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now), func(c *rp.Config) { c.ClientSecret = "secret_wrong" })
	rec := httptest.NewRecorder()
	_, err := e.rp.AuthCodeURL(rec, httptest.NewRequest("POST", "https://app.example.com/login", nil), "ann@example.com")
	var authErr *rp.AuthError
	require.ErrorAs(t, err, &authErr)
	assert.Equal(t, "invalid_client", authErr.Code)
	assert.Empty(t, rec.Result().Cookies(), "no sign-in was saved")
}

// TestAuthCodeURLContext: the push runs with the context given, not the request's.
func TestAuthCodeURLContext(t *testing.T) {
	p := newIDP(t, true, withPAR)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
	req := httptest.NewRequest("POST", "https://app.example.com/login", nil)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	_, err := e.rp.AuthCodeURLContext(cancelled, rec, req, "ann@example.com")
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, rec.Result().Cookies(), "no sign-in was saved")

	rec = httptest.NewRecorder()
	target, err := e.rp.AuthCodeURLContext(context.Background(), rec, req.WithContext(cancelled), "ann@example.com")
	require.NoError(t, err)
	f := &flight{authURL: target, cookies: rec.Result().Cookies()}
	p.authorize(t, f, "approve")
	res, _, err := e.finish(f, f.cookies, nil)
	require.NoError(t, err)
	assert.Equal(t, p.user.ID, res.Subject)
}

// TestCallbackChecksTheUser: the login hint matches the token when it is its sub, or its
// preferred_username or email as the store folds them; anything else is ErrWrongUser, and no
// Result.
func TestCallbackChecksTheUser(t *testing.T) {
	tests := []struct {
		name  string
		hint  func(p *idp) string
		claim map[string]any // claims the token is given; nil deletes one
		want  error          // nil: signed in
	}{
		{"userName as hint", func(*idp) string { return "ann@example.com" }, nil, nil},
		{"id as hint", func(p *idp) string { return p.user.ID }, nil, nil},
		{"userName in another case", func(*idp) string { return "ANN@Example.COM" }, nil, nil},
		{"preferred_username in another case", func(*idp) string { return "ann@example.com" },
			map[string]any{"preferred_username": "Ann@EXAMPLE.com"}, nil},
		{"the email matches", func(*idp) string { return "ann@example.com" },
			map[string]any{"preferred_username": "ann", "email": "ANN@example.com"}, nil},
		{"neither matches", func(*idp) string { return "ann@example.com" },
			map[string]any{"preferred_username": "mallory@example.com", "email": "mallory@example.com"}, rp.ErrWrongUser},
		{"no names in the token", func(*idp) string { return "ann@example.com" },
			map[string]any{"preferred_username": nil, "email": nil}, rp.ErrWrongUser},
		{"another sub", func(p *idp) string { return p.user.ID },
			map[string]any{"sub": "user_someone_else"}, rp.ErrWrongUser},
		{"the id compared exactly", func(p *idp) string { return p.user.ID },
			map[string]any{"sub": "USER_SOMEONE", "preferred_username": nil, "email": nil}, rp.ErrWrongUser},
		{"a name that is not a string", func(*idp) string { return "ann@example.com" },
			map[string]any{"preferred_username": 42}, rp.ErrInvalidToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newIDP(t, true)
			if tc.claim != nil {
				p.setForge(t, func(claims map[string]any) string {
					for k, v := range tc.claim {
						if v == nil {
							delete(claims, k)
						} else {
							claims[k] = v
						}
					}
					return p.sign(claims)
				})
			}
			e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
			f := e.beginFor(t, tc.hint(p))
			p.authorize(t, f, "approve")
			res, _, err := e.finish(f, f.cookies, nil)
			if tc.want == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.hint(p), res.LoginHint)
				return
			}
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, res)
		})
	}
}

// TestResultCheckUser is the matching rule itself: sub exactly; userName and email
// case-insensitively, folded as the store folds userNames (schema.Fold: simple case folding,
// so ſ is s and K is k).
func TestResultCheckUser(t *testing.T) {
	res := &rp.Result{Subject: "user_Ab3", PreferredUsername: "roſſ@example.com", Email: "Ross.Kelvin@Example.com"}
	tests := []struct {
		user string
		ok   bool
	}{
		{"user_Ab3", true},
		{"user_ab3", false}, // the id is compared exactly
		{"USER_AB3", false},
		{"roſſ@example.com", true},
		{"ROSS@example.com", true}, // ſ folds to s
		{"ross@EXAMPLE.COM", true},
		{"ross.kelvin@example.com", true},
		{"ross.Kelvin@example.com", true}, // K, the Kelvin sign, folds to k
		{"ross.kelvin@example.co", false},
		{"ross", false},
		{"mallory@example.com", false},
		{" ross@example.com", false}, // no trimming
		{"", false},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			err := res.CheckUser(tc.user)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, rp.ErrWrongUser)
			}
		})
	}

	t.Run("no names in the token", func(t *testing.T) {
		bare := &rp.Result{Subject: "user_1"}
		assert.NoError(t, bare.CheckUser("user_1"))
		assert.ErrorIs(t, bare.CheckUser(""), rp.ErrWrongUser, "an empty name never matches an empty claim")
		assert.ErrorIs(t, bare.CheckUser("ann@example.com"), rp.ErrWrongUser)
	})
}

// TestCallbackFoldsAsTheStore: a userName with a long s (ſ) is the same user as one with s, at
// the store and so at the RP.
func TestCallbackFoldsAsTheStore(t *testing.T) {
	p := newIDP(t, true)
	ross, err := p.backend.Users.Create(context.Background(), "acme", store.User{UserName: "roſſ@example.com", Active: true})
	require.NoError(t, err)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
	f := e.beginFor(t, "ROSS@example.com")
	p.authorize(t, f, "approve")
	res, _, err := e.finish(f, f.cookies, nil)
	require.NoError(t, err)
	assert.Equal(t, ross.ID, res.Subject)
	assert.Equal(t, "roſſ@example.com", res.PreferredUsername)
}

// enrolledIDP is an idp whose users all have the factor, as the test authenticator tells the
// provider, and whose enrollment page is shown.
func enrolledIDP(t *testing.T) *idp {
	t.Helper()
	return newIDP(t, true, func(c *oidc2fa.Config) {
		c.Authenticator.(*authtest.Authenticator).Enrolled = func(string, string) bool { return true }
	})
}

// TestEnrollURLRefusesToReplace: with the first factor alone, an enrolled user's factor cannot
// be replaced: ErrSignInFirst (and the provider's login_required).
func TestEnrollURLRefusesToReplace(t *testing.T) {
	p := enrolledIDP(t)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
	f, err := e.beginEnroll("ann@example.com")
	require.ErrorIs(t, err, rp.ErrSignInFirst)
	var authErr *rp.AuthError
	require.ErrorAs(t, err, &authErr)
	assert.Equal(t, rp.LoginRequired, authErr.Code)
	assert.Empty(t, f.authURL)
	assert.Empty(t, f.cookies, "nothing was saved")
}

// TestReenrollURL: after a sign-in with both factors, ReenrollURL gets a link that replaces the
// factor; once the sign-in is older than the provider allows, it is ErrSignInFirst again.
func TestReenrollURL(t *testing.T) {
	p := enrolledIDP(t)
	p.auth.AutoApprove = true
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
	res, err := e.flow(t)
	require.NoError(t, err)

	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "https://app.example.com/settings/2fa", nil)
	link, err := e.rp.ReenrollURL(context.Background(), rec, req, res)
	require.NoError(t, err)
	f := &flight{authURL: link, cookies: rec.Result().Cookies()}
	p.enroll(t, f, "enroll")
	_, _, err = e.finish(f, f.cookies, nil)
	var done *rp.EnrollmentComplete
	require.ErrorAs(t, err, &done, "the replacement went through")
	assert.Equal(t, p.user.ID, done.LoginHint)

	p.clock.Advance(oidc2fa.DefaultReenrollmentMaxAge + time.Second)
	_, err = e.rp.ReenrollURL(context.Background(), httptest.NewRecorder(), req, res)
	assert.ErrorIs(t, err, rp.ErrSignInFirst, "the sign-in is too old")

	_, err = e.rp.ReenrollURL(context.Background(), httptest.NewRecorder(), req, &rp.Result{Subject: p.user.ID})
	assert.Error(t, err, "a Result without an ID token")
	assert.False(t, errors.Is(err, rp.ErrSignInFirst))
}

// languageRecorder is an Authenticator that records the person's languages of each login
// request before the one it wraps serves it.
type languageRecorder struct {
	oidc2fa.Authenticator
	got *[][]language.Tag
}

func (l languageRecorder) ServeLogin(w http.ResponseWriter, r *http.Request, login *oidc2fa.Login) {
	*l.got = append(*l.got, login.Languages)
	l.Authenticator.ServeLogin(w, r, login)
}

// TestUILocales: Config.UILocales reaches the provider's pages as ui_locales, through the
// browser or pushed, ahead of the browser's Accept-Language; without it the provider follows
// the browser.
func TestUILocales(t *testing.T) {
	for _, tc := range []struct {
		name      string
		par       bool
		uiLocales func(*http.Request) string
		want      []language.Tag
	}{
		{"through the browser", false, func(*http.Request) string { return "de-CH fr" }, []language.Tag{language.MustParse("de-CH"), language.French}},
		{"pushed", true, func(*http.Request) string { return "ja" }, []language.Tag{language.Japanese}},
		{"none given", true, func(*http.Request) string { return "" }, nil},
		{"no func", false, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]language.Tag
			configure := []func(*oidc2fa.Config){func(c *oidc2fa.Config) {
				c.Authenticator = languageRecorder{c.Authenticator, &got}
			}}
			if tc.par {
				configure = append(configure, withPAR)
			}
			p := newIDP(t, true, configure...)
			e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now), func(c *rp.Config) { c.UILocales = tc.uiLocales })
			f := e.begin(t)
			if !tc.par && tc.uiLocales != nil {
				assert.Contains(t, f.authURL, "ui_locales=")
			}
			p.authorize(t, f, "approve")
			res, _, err := e.finish(f, f.cookies, nil)
			require.NoError(t, err)
			assert.Equal(t, p.user.ID, res.Subject)
			require.NotEmpty(t, got, "the login page was served")
			langs := got[0]
			if len(tc.want) == 0 {
				assert.Empty(t, langs, "no ui_locales and no Accept-Language: no preference")
				return
			}
			require.GreaterOrEqual(t, len(langs), len(tc.want))
			assert.Equal(t, tc.want, langs[:len(tc.want)], "ui_locales first")
		})
	}
}
