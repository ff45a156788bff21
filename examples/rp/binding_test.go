package main

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/picture"
)

// TestStolenPasswordAndAnotherAccount is the attack on the binding of the two factors: someone
// who knows alice's password and has an account of their own in the same tenant (mallory, with
// her own picture password) signs in as alice, edits login_hint in the URL that sends the
// browser to visid, and clicks mallory's points. With pushed requests (the app's default) the
// edit never reaches visid: the page is alice's and mallory's points fail. Without them
// (-no-par) visid passes mallory, and the app refuses the ID token: it names mallory, not
// alice. Either way nobody is signed in.
func TestStolenPasswordAndAnotherAccount(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{{"pushed request", nil}, {"plain request", []string{"-no-par"}}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newPictureStack(t, tc.flags...)
			b := newBrowser(t)
			form := b.get(s.app.url + "/")
			p := b.do(b.stay, "POST", s.app.url+"/login", url.Values{"csrf": {csrfOf(t, form)},
				"email": {demoEmail}, "password": {demoPassword}})
			require.Equal(t, http.StatusSeeOther, p.status, p.body)
			authURL, err := url.Parse(p.location)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(p.location, s.v.srv.URL+"/oidc/authorize/demo?"), p.location)
			if tc.flags == nil {
				assert.Equal(t, []string{s.v.clientID}, authURL.Query()["client_id"])
				assert.NotEmpty(t, authURL.Query().Get("request_uri"))
				assert.NotContains(t, p.location, "login_hint", "nothing to edit")
			}

			// The edit in the browser's address bar.
			q := authURL.Query()
			q.Set("login_hint", "mallory@example.com")
			authURL.RawQuery = q.Encode()
			login := b.get(authURL.String())
			require.Equal(t, http.StatusOK, login.status, login.body)
			alt := regexp.MustCompile(`alt="Your picture: ([^"]+)"`).FindStringSubmatch(login.body)
			require.NotNil(t, alt, login.body)

			// Mallory's points.
			end := b.post(login.url, url.Values{"csrf": {csrfOf(t, login)}, "points": {picture.FormatPoints(malloryPoints)}})
			if tc.flags == nil {
				assert.Equal(t, "Harbour", alt[1], "alice's picture: the pushed login_hint stands")
				assert.True(t, strings.HasPrefix(end.url, s.v.srv.URL+"/oidc/login/"), "still at visid: %s", end.url)
				assert.Contains(t, end.body, "That did not match. Try again.")
			} else {
				assert.Equal(t, "Farm", alt[1], "mallory's picture: the edit reached visid")
				assert.Equal(t, http.StatusForbidden, end.status, end.body)
				assert.Contains(t, end.body, "The second factor was passed by another account")
			}
			assert.NotContains(t, b.get(s.app.url+"/").body, "passed both factors", "nobody is signed in")
		})
	}
}

// TestPasswordAloneCannotReplaceThePicture: "Set up picture password" after the password is
// refused for a user who has one; it works for one who has none.
func TestPasswordAloneCannotReplaceThePicture(t *testing.T) {
	s := newPictureStack(t)
	b := newBrowser(t)
	p := b.enroll(s.app, demoEmail, demoPassword)
	assert.Equal(t, http.StatusConflict, p.status)
	assert.Contains(t, p.body, "You already have a picture password")
	cred, err := s.pics.Get(t.Context(), "demo", s.alice.ID)
	require.NoError(t, err)
	assert.Equal(t, "harbour", cred.Image, "nothing changed")
}
