package main

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// enrolledText is what the app's page says after visid set up the picture password, and
// changedText what it says after a signed-in user changed it.
const (
	enrolledText = "Your picture password is set up. Sign in to use it."
	changedText  = "Your new picture password is set up. You are still signed in."
)

// notEnrolledTitle is the heading of the page after an enrollment that did not finish.
const notEnrolledTitle = "<h1>The picture password was not set up</h1>"

// enroll fills in the app's password form and presses "Set up picture password", following
// every redirect.
func (b *browser) enroll(a *appRun, email, password string) page {
	b.t.Helper()
	form := b.get(a.url + "/")
	require.Equal(b.t, http.StatusOK, form.status, form.body)
	return b.post(a.url+"/login", url.Values{"csrf": {csrfOf(b.t, form)}, "email": {email},
		"password": {password}, "action": {"enroll"}})
}

// openLink presses Continue on visid's enrollment link page p, following the redirects to the
// enrollment page.
func (b *browser) openLink(v *visid, p page) page {
	b.t.Helper()
	require.True(b.t, strings.HasPrefix(p.url, v.srv.URL+"/oidc/enroll/demo/"), "at visid's link page: %s", p.url)
	require.Contains(b.t, p.body, `id="continue"`)
	action := regexp.MustCompile(`action="([^"]+)"`).FindStringSubmatch(p.body)
	require.NotNil(b.t, action, "no form on the link page: %s", p.body)
	return b.post(v.srv.URL+html.UnescapeString(action[1]), url.Values{})
}

// TestEnroll sets up the second factor from the password form, as a person does: the password,
// visid's link page, the test Authenticator's enrollment page, and the app's page, which signs
// nobody in. With either kind of rp.Sessions.
func TestEnroll(t *testing.T) {
	for _, kind := range []string{"server", "cookie"} {
		t.Run(kind, func(t *testing.T) {
			v := newVisid(t, false)
			a := startApp(t, v, "-sessions", kind)
			b := newBrowser(t)

			p := b.enroll(a, "Alice@Example.com", demoPassword)
			require.Equal(t, http.StatusOK, p.status, p.body)
			assert.Contains(t, p.body, "Set up your second factor", "visid's link page")
			assert.Contains(t, p.body, "for Example app")

			p = b.openLink(v, p)
			require.Equal(t, http.StatusOK, p.status, p.body)
			assert.Contains(t, p.body, "Test enrollment for Example app")
			assert.Contains(t, p.body, "User: alice@example.com", "visid enrolls the user of the password")

			p = b.decide(v, p, "enroll", true)
			assert.Equal(t, http.StatusOK, p.status, p.body)
			assert.True(t, strings.HasPrefix(p.url, a.url+"/callback?"), p.url)
			assert.Contains(t, p.body, enrolledText)
			assert.Contains(t, p.body, `<a href="/">Sign in</a>`)
			assert.NotContains(t, p.body, "passed both factors")

			p = b.get(a.url + "/")
			assert.Contains(t, p.body, loginForm, "the enrollment signed nobody in")
			assert.NotContains(t, p.body, "passed both factors")

			p = b.signIn(a, demoEmail, demoPassword)
			require.Contains(t, p.body, "User: alice@example.com")
			p = b.decide(v, p, "approve", true)
			assert.Contains(t, p.body, signedInAs("alice@example.com"), "a sign-in after the enrollment works")
		})
	}
}

// TestEnrollCallbackNeverSignsIn: the callback of an enrollment, replayed or with a code in
// place of enrollment=complete, signs nobody in, even in a browser that passed the password for
// a sign-in meanwhile.
func TestEnrollCallbackNeverSignsIn(t *testing.T) {
	v := newVisid(t, false)
	a := startApp(t, v)
	b := newBrowser(t)

	p := b.decide(v, b.openLink(v, b.enroll(a, demoEmail, demoPassword)), "enroll", false)
	require.Equal(t, http.StatusSeeOther, p.status, p.body)
	callback, err := url.Parse(p.location)
	require.NoError(t, err)
	require.Equal(t, a.url+"/callback", callback.Scheme+"://"+callback.Host+callback.Path)
	assert.Equal(t, "complete", callback.Query().Get("enrollment"))
	assert.False(t, callback.Query().Has("code"))

	login := b.signIn(a, demoEmail, demoPassword) // the browser's session has alice's password now
	require.Contains(t, login.body, "User: alice@example.com")

	forged := *callback
	q := forged.Query()
	q.Del("enrollment")
	q.Set("code", "a-code-of-another-sign-in")
	forged.RawQuery = q.Encode()
	p = b.get(forged.String())
	assert.Equal(t, http.StatusBadGateway, p.status)
	assert.NotContains(t, p.body, enrolledText)
	assert.NotContains(t, b.get(a.url+"/").body, "passed both factors")

	p = b.get(callback.String())
	assert.Equal(t, http.StatusBadRequest, p.status, "the enrollment's state was used up")
	assert.Contains(t, p.body, "This sign-in has ended")
	assert.NotContains(t, b.get(a.url+"/").body, "passed both factors")

	p = b.decide(v, login, "approve", true)
	assert.Contains(t, p.body, signedInAs("alice@example.com"), "the sign-in started meanwhile goes on")
}

func TestEnrollWrongPassword(t *testing.T) {
	v := newVisid(t, false)
	a := startApp(t, v)
	b := newBrowser(t)

	for _, tt := range []struct{ name, email, password string }{
		{"wrong password", demoEmail, "Correct horse battery staple"},
		{"unknown user", "nobody@example.com", demoPassword},
		{"empty password", demoEmail, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := b.enroll(a, tt.email, tt.password)
			assert.Equal(t, http.StatusOK, p.status)
			assert.Equal(t, a.url+"/login", p.url, "the form again, not visid")
			assert.Contains(t, p.body, "The email or the password is wrong.")
			assert.Contains(t, p.body, loginForm)
		})
	}
}

func TestEnrollCancelled(t *testing.T) {
	v := newVisid(t, false)
	a := startApp(t, v)
	b := newBrowser(t)

	p := b.decide(v, b.openLink(v, b.enroll(a, demoEmail, demoPassword)), "cancel", true)
	assert.Equal(t, http.StatusOK, p.status)
	assert.True(t, strings.HasPrefix(p.url, a.url+"/callback?"), p.url)
	assert.Contains(t, p.body, notEnrolledTitle)
	assert.NotContains(t, p.body, enrolledText)
	assert.Contains(t, p.body, `<a href="/">Start again</a>`)
	assert.Contains(t, b.get(a.url+"/").body, loginForm, "not signed in")
}

// TestSignInAfterAbandonedEnrollment: an enrollment left at visid's link page does not change
// what a later denied sign-in says.
func TestSignInAfterAbandonedEnrollment(t *testing.T) {
	v := newVisid(t, false)
	a := startApp(t, v)
	b := newBrowser(t)

	require.Contains(t, b.enroll(a, demoEmail, demoPassword).body, "Set up your second factor")
	p := b.decide(v, b.signIn(a, demoEmail, demoPassword), "deny", true)
	assert.Equal(t, http.StatusForbidden, p.status)
	assert.Contains(t, p.body, "The sign-in was not finished")
	assert.NotContains(t, p.body, notEnrolledTitle)
}

// TestEnrollUserUnknownToVisid: the app knows carol, visid does not; visid refuses the link.
func TestEnrollUserUnknownToVisid(t *testing.T) {
	v := newVisid(t, false)
	users := t.TempDir() + "/users"
	writeFile(t, users, "carol@example.com:carol's password\n")
	a := startApp(t, v, "-users", users)
	b := newBrowser(t)

	p := b.enroll(a, "carol@example.com", "carol's password")
	assert.Equal(t, http.StatusBadGateway, p.status)
	assert.Equal(t, a.url+"/login", p.url)
	assert.Contains(t, p.body, "The picture password cannot be set up")
	assert.Contains(t, p.body, "invalid_request")
}

func TestLoginUnknownAction(t *testing.T) {
	v := newVisid(t, false)
	a := startApp(t, v)
	b := newBrowser(t)

	form := b.get(a.url + "/")
	p := b.post(a.url+"/login", url.Values{"csrf": {csrfOf(t, form)}, "email": {demoEmail},
		"password": {demoPassword}, "action": {"delete-everything"}})
	assert.Equal(t, http.StatusBadRequest, p.status)
	assert.Equal(t, a.url+"/login", p.url)
}
