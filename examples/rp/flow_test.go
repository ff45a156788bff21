package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/store"
)

// signedInAs is the heading of the page of a user who passed both factors.
func signedInAs(email string) string { return "<h1>" + email + " passed both factors</h1>" }

// loginForm is in the page of a browser that is not signed in.
const loginForm = `<form method="post" action="/login">`

// TestSignIn runs the whole sign-in as a person does, with either kind of rp.Sessions: the
// password, then visid, then the app's page.
func TestSignIn(t *testing.T) {
	for _, kind := range []string{"server", "cookie"} {
		t.Run(kind, func(t *testing.T) {
			v := newVisid(t, true)
			a := startApp(t, v, "-sessions", kind)
			b := newBrowser(t)

			p := b.signIn(a, "Alice@Example.com", demoPassword)
			require.Equal(t, http.StatusOK, p.status, p.body)
			assert.Equal(t, a.url+"/", p.url, "the callback redirects to the start page")
			assert.Contains(t, p.body, signedInAs("alice@example.com"))
			assert.Contains(t, p.body, "<dd>"+v.users["alice@example.com"].ID+"</dd>", "the visid subject")
			assert.Regexp(t, `<dd>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ</dd>`, p.body, "auth_time")
			assert.Contains(t, p.body, "<dd>test</dd>", "amr, as the test Authenticator reports it")

			p = b.get(a.url + "/")
			assert.Contains(t, p.body, signedInAs("alice@example.com"), "the session lasts")

			p = b.post(a.url+"/logout", url.Values{"csrf": {"forged"}})
			assert.Equal(t, http.StatusForbidden, p.status)
			assert.Contains(t, b.get(a.url+"/").body, signedInAs("alice@example.com"), "a forged logout changes nothing")

			p = b.post(a.url+"/logout", url.Values{"csrf": {csrfOf(t, b.get(a.url+"/"))}})
			require.Equal(t, http.StatusOK, p.status)
			assert.Equal(t, a.url+"/", p.url)
			assert.Contains(t, p.body, loginForm, "signed out")
			assert.NotContains(t, p.body, "passed both factors")

			require.NoError(t, a.stop(t), "a cancelled context is a graceful shutdown")
			_, err := http.Get(a.url + "/")
			assert.Error(t, err, "the listener is closed")
		})
	}
}

func TestWrongPassword(t *testing.T) {
	v := newVisid(t, true)
	a := startApp(t, v)
	b := newBrowser(t)

	for _, tt := range []struct{ name, email, password string }{
		{"wrong password", demoEmail, "Correct horse battery staple"},
		{"unknown user", "nobody@example.com", demoPassword},
		{"empty password", demoEmail, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := b.signIn(a, tt.email, tt.password)
			assert.Equal(t, http.StatusOK, p.status)
			assert.Equal(t, a.url+"/login", p.url, "the form again, without a redirect")
			assert.Contains(t, p.body, "The email or the password is wrong.")
			assert.Contains(t, p.body, loginForm)
			assert.Contains(t, p.body, `value="`+tt.email+`"`, "the email is filled in again")
		})
	}
	assert.NotContains(t, b.get(a.url+"/").body, "passed both factors")
}

func TestLoginCSRF(t *testing.T) {
	v := newVisid(t, true)
	a := startApp(t, v)
	b := newBrowser(t)
	b.get(a.url + "/") // a session, whose token the forged form does not carry

	for name, form := range map[string]url.Values{
		"no token":    {"email": {demoEmail}, "password": {demoPassword}},
		"wrong token": {"email": {demoEmail}, "password": {demoPassword}, "csrf": {"forged"}},
	} {
		t.Run(name, func(t *testing.T) {
			p := b.post(a.url+"/login", form)
			assert.Equal(t, http.StatusForbidden, p.status)
			assert.Equal(t, a.url+"/login", p.url, "not sent to visid")
			assert.Contains(t, p.body, "The form had expired")
			assert.Contains(t, p.body, loginForm, "with a fresh form to try again")
		})
	}

	t.Run("another browser's token", func(t *testing.T) {
		other := newBrowser(t)
		p := other.post(a.url+"/login", url.Values{"email": {demoEmail}, "password": {demoPassword},
			"csrf": {csrfOf(t, b.get(a.url+"/"))}})
		assert.Equal(t, http.StatusForbidden, p.status)
	})
}

// TestSecondFactorDenied: visid's login page says no; visid sends the browser back with
// access_denied.
func TestSecondFactorDenied(t *testing.T) {
	v := newVisid(t, false)
	a := startApp(t, v)
	b := newBrowser(t)

	p := b.signIn(a, demoEmail, demoPassword)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.True(t, strings.HasPrefix(p.url, v.srv.URL+"/oidc/login/demo/"), "at visid's login page: %s", p.url)
	assert.Contains(t, p.body, "User: alice@example.com", "visid was asked about the user of the password")

	p = b.decide(v, p, "deny", true)
	assert.Equal(t, http.StatusForbidden, p.status)
	assert.True(t, strings.HasPrefix(p.url, a.url+"/callback?"), p.url)
	assert.Contains(t, p.body, "The sign-in was not finished")
	assert.Contains(t, p.body, "locks the picture password for a while", "a locked factor is named as a possible cause")
	assert.NotContains(t, p.body, "cancelled or not completed")
	assert.Contains(t, p.body, `<a href="/">Start again</a>`)

	p = b.get(a.url + "/")
	assert.Contains(t, p.body, loginForm, "not signed in")
	assert.NotContains(t, p.body, "passed both factors")
}

// TestTamperedState: a callback whose state was altered is refused and signs nobody in; the
// sign-in it was altered from is not spent by it.
func TestTamperedState(t *testing.T) {
	v := newVisid(t, false)
	a := startApp(t, v)
	b := newBrowser(t)

	p := b.decide(v, b.signIn(a, demoEmail, demoPassword), "approve", false)
	require.Equal(t, http.StatusSeeOther, p.status, p.body)
	callback, err := url.Parse(p.location)
	require.NoError(t, err)
	require.Equal(t, a.url+"/callback", callback.Scheme+"://"+callback.Host+callback.Path)

	for name, edit := range map[string]func(url.Values){
		"altered":  func(q url.Values) { q.Set("state", strings.ToUpper(q.Get("state"))) },
		"missing":  func(q url.Values) { q.Del("state") },
		"repeated": func(q url.Values) { q.Add("state", q.Get("state")) },
	} {
		t.Run(name, func(t *testing.T) {
			u := *callback
			q := u.Query()
			edit(q)
			u.RawQuery = q.Encode()
			p := b.get(u.String())
			assert.Equal(t, http.StatusBadRequest, p.status)
			assert.Contains(t, p.body, "This sign-in has ended")
			assert.NotContains(t, b.get(a.url+"/").body, "passed both factors")
		})
	}

	p = b.get(callback.String())
	assert.Contains(t, p.body, signedInAs("alice@example.com"), "the untampered callback still works")
	p = b.get(callback.String())
	assert.Equal(t, http.StatusBadRequest, p.status, "but once only")
	assert.Contains(t, p.body, "This sign-in has ended")
}

// TestFactorsOfDifferentUsers: one browser passes alice's password, then bob's, then alice's second
// factor. The callback carries a valid ID token for alice, but this browser's session is now
// bob's first factor, so Result.CheckUser with bob refuses it.
func TestFactorsOfDifferentUsers(t *testing.T) {
	v := newVisid(t, false)
	users := t.TempDir() + "/users"
	writeFile(t, users, "bob@example.com:bob's password\n")
	a := startApp(t, v, "-users", users)
	b := newBrowser(t)

	alicePage := b.signIn(a, demoEmail, demoPassword)
	require.Contains(t, alicePage.body, "User: alice@example.com")
	bobPage := b.signIn(a, "bob@example.com", "bob's password")
	require.Contains(t, bobPage.body, "User: bob@example.com")

	p := b.decide(v, alicePage, "approve", true)
	assert.Equal(t, http.StatusForbidden, p.status)
	assert.Contains(t, p.body, "The two factors were for different users")
	assert.NotContains(t, b.get(a.url+"/").body, "passed both factors")

	p = b.decide(v, bobPage, "approve", true)
	assert.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, signedInAs("bob@example.com"), "bob's own sign-in goes on")
	assert.Contains(t, p.body, "<dd>"+v.users["bob@example.com"].ID+"</dd>")
}

// TestSecondFactorWithoutPassword: the browser signed out while visid's page was open; the
// second factor alone signs nobody in.
func TestSecondFactorWithoutPassword(t *testing.T) {
	v := newVisid(t, false)
	a := startApp(t, v)
	b := newBrowser(t)

	login := b.signIn(a, demoEmail, demoPassword)
	p := b.post(a.url+"/logout", url.Values{"csrf": {csrfOf(t, b.get(a.url+"/"))}})
	require.Contains(t, p.body, loginForm)

	p = b.decide(v, login, "approve", true)
	assert.Equal(t, http.StatusForbidden, p.status)
	assert.Contains(t, p.body, "Sign in with your password first")
	assert.NotContains(t, b.get(a.url+"/").body, "passed both factors")
}

// TestSessionCookie checks the attributes of the app's session cookie and the headers of its
// pages.
func TestSessionCookie(t *testing.T) {
	v := newVisid(t, true)
	a := startApp(t, v)
	resp, err := http.Get(a.url + "/")
	require.NoError(t, err)
	resp.Body.Close()
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	c := cookies[0]
	assert.Equal(t, sessionCookie, c.Name)
	assert.Len(t, c.Value, 43, "256 random bits")
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteLaxMode, c.SameSite)
	assert.Equal(t, "/", c.Path)
	assert.False(t, c.Secure, "the app is served over http")

	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "form-action 'self' "+v.srv.URL,
		"the login form's redirect to visid is allowed")
}

// TestSecondFactorLockedTold: when visid may tell the app that the factor is locked (the app's
// client must push every sign-in), the app tells the person, and until when; otherwise a lock
// looks like any failure (TestSecondFactorDenied).
func TestSecondFactorLockedTold(t *testing.T) {
	v := newVisid(t, false, func(c *oidc2fa.Config, b store.Backend) { c.Pushed = b.Pushed })
	_, err := oidc2fa.SetRequirePAR(context.Background(), v.clients, "demo", v.clientID, true)
	require.NoError(t, err)
	a := startApp(t, v)
	b := newBrowser(t)

	p := b.signIn(a, demoEmail, demoPassword)
	require.Equal(t, http.StatusOK, p.status, p.body)
	before := time.Now()
	p = b.decide(v, p, "lock", true)
	assert.Equal(t, http.StatusForbidden, p.status)
	assert.Contains(t, p.body, "Your picture password is locked")
	after := time.Now()
	said := func(at time.Time) bool {
		return strings.Contains(p.body, "locked your picture password until "+at.Add(authtest.LockFor).UTC().Format("15:04 UTC"))
	}
	assert.True(t, said(before) || said(after), "when to try again: %s", p.body) // a minute may turn meanwhile
	assert.NotContains(t, p.body, "The sign-in was not finished")

	p = b.get(a.url + "/")
	assert.Contains(t, p.body, loginForm, "not signed in")
}
