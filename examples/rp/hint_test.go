package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// twinPoints are the points of alice's twin on the farm.
var twinPoints = []picture.Point{{X: 200, Y: 150}, {X: 700, Y: 120}, {X: 500, Y: 400}, {X: 150, Y: 600}, {X: 850, Y: 650}}

// TestHintNamingTwoUsers is the attack with pushed requests (the app's default): someone who can
// influence provisioning gives a second user alice's email as userName (in any case) and enrolls
// its picture. Alice's password, then the twin's points: the hint alice@example.com names two
// users, so it names nobody at visid, and neither the twin's points nor alice's pass. Nobody is
// signed in.
func TestHintNamingTwoUsers(t *testing.T) {
	for _, tc := range []struct{ twin, typed string }{
		{"alice@example.com", demoEmail},
		{"ALICE@EXAMPLE.COM", demoEmail},
		{"alice@example.com", "Alice@Example.COM"}, // the app folds what the person types
	} {
		t.Run(tc.twin+" typed "+tc.typed, func(t *testing.T) {
			s := newPictureStack(t)
			ctx := context.Background()
			twin, err := s.users.Create(ctx, "demo", store.User{UserName: tc.twin, Active: true,
				Emails: []store.MultiValue{{Value: "twin@example.com", Primary: true}}})
			require.NoError(t, err)
			require.NoError(t, s.auth.Enroll(ctx, "demo", twin.ID, "farm", twinPoints))

			b := newBrowser(t)
			login := b.signIn(s.app, tc.typed, demoPassword)
			require.Equal(t, http.StatusOK, login.status, login.body)
			require.True(t, strings.HasPrefix(login.url, s.v.srv.URL+"/oidc/login/"), "at visid: %s", login.url)
			for _, pts := range [][]picture.Point{twinPoints, alicePoints} {
				end := b.post(login.url, url.Values{"csrf": {csrfOf(t, login)}, "points": {picture.FormatPoints(pts)}})
				assert.True(t, strings.HasPrefix(end.url, s.v.srv.URL+"/oidc/login/"), "still at visid: %s", end.url)
				assert.Contains(t, end.body, "That did not match. Try again.")
				login = end
			}
			assert.NotContains(t, b.get(s.app.url+"/").body, "passed both factors", "nobody is signed in")
		})
	}
}

// TestSharedEmailWithoutPAR is the attack with -no-par: mallory's primary email is alice's email
// (in another case). Alice's password, the hint edited to mallory, mallory's points: visid
// passes mallory, but her ID token leaves out the email that names alice too, so the app
// refuses it. Nobody is signed in.
func TestSharedEmailWithoutPAR(t *testing.T) {
	for _, email := range []string{"alice@example.com", "ALICE@example.com", "Alice@Example.COM"} {
		t.Run(email, func(t *testing.T) {
			s := newPictureStack(t, "-no-par")
			_, err := s.users.Update(context.Background(), "demo", s.mallory.ID, func(u *store.User) error {
				u.Emails = []store.MultiValue{{Value: email, Primary: true}}
				return nil
			})
			require.NoError(t, err)

			b := newBrowser(t)
			form := b.get(s.app.url + "/")
			p := b.do(b.stay, "POST", s.app.url+"/login", url.Values{"csrf": {csrfOf(t, form)},
				"email": {demoEmail}, "password": {demoPassword}})
			require.Equal(t, http.StatusSeeOther, p.status, p.body)
			authURL, err := url.Parse(p.location)
			require.NoError(t, err)
			q := authURL.Query()
			require.Equal(t, demoEmail, q.Get("login_hint"))
			q.Set("login_hint", "mallory")
			authURL.RawQuery = q.Encode()
			login := b.get(authURL.String())
			require.Equal(t, http.StatusOK, login.status, login.body)
			assert.Contains(t, login.body, `alt="Your picture: Farm"`, "mallory's picture: the edit reached visid")

			end := b.post(login.url, url.Values{"csrf": {csrfOf(t, login)}, "points": {picture.FormatPoints(malloryPoints)}})
			assert.Equal(t, http.StatusForbidden, end.status, end.body)
			assert.Contains(t, end.body, "The second factor was passed by another account")
			assert.NotContains(t, b.get(s.app.url+"/").body, "passed both factors", "nobody is signed in")
		})
	}
}

// TestVisidIDBoundAtFirstSignIn: the app stores the visid id of alice's first sign-in with both
// factors. When provisioning later hands her email to another visid user (alice's changes, a
// new user gets alice@example.com), the hint names the new user alone and its token names it
// with that email, but its sub is not the one stored: nobody is signed in.
func TestVisidIDBoundAtFirstSignIn(t *testing.T) {
	s := newPictureStack(t)
	ctx := context.Background()
	b := newBrowser(t)
	signIn := func(points []picture.Point) page {
		login := b.signIn(s.app, demoEmail, demoPassword)
		require.True(t, strings.HasPrefix(login.url, s.v.srv.URL+"/oidc/login/"), "at visid: %s", login.url)
		return b.post(login.url, url.Values{"csrf": {csrfOf(t, login)}, "points": {picture.FormatPoints(points)}})
	}
	home := signIn(alicePoints)
	require.Contains(t, home.body, "passed both factors", "alice's first sign-in")
	require.Equal(t, http.StatusOK, b.post(s.app.url+"/logout", url.Values{"csrf": {csrfOf(t, home)}}).status)

	_, err := s.users.Update(ctx, "demo", s.alice.ID, func(u *store.User) error {
		u.Emails = []store.MultiValue{{Value: "alice@old.example.com", Primary: true}}
		return nil
	})
	require.NoError(t, err)
	heir, err := s.users.Create(ctx, "demo", store.User{UserName: "heir", Active: true,
		Emails: []store.MultiValue{{Value: "alice@example.com", Primary: true}}})
	require.NoError(t, err)
	require.NoError(t, s.auth.Enroll(ctx, "demo", heir.ID, "farm", twinPoints))

	end := signIn(twinPoints)
	assert.Equal(t, http.StatusForbidden, end.status, end.body)
	assert.Contains(t, end.body, "another visid account")
	assert.NotContains(t, b.get(s.app.url+"/").body, "passed both factors", "nobody is signed in")
}
