package rp_test

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/rp"
	"github.com/visid/visid/store"
)

// addUser gives the provider another active user of tenant acme, with a primary email unless
// email is "".
func addUser(t *testing.T, p *idp, userName, email string) *store.User {
	t.Helper()
	u := store.User{UserName: userName, Active: true}
	if email != "" {
		u.Emails = []store.MultiValue{{Value: email, Primary: true}}
	}
	created, err := p.backend.Users.Create(context.Background(), "acme", u)
	require.NoError(t, err)
	return created
}

// TestHintNamingTwoUsersSignsNobodyIn, with pushed requests: ann's primary email is another
// user's userName (in any case, or folded). The sign-in the application starts with that name
// names nobody at the provider, so the other user's second factor cannot pass for ann (and
// nobody's can): the callback is access_denied.
func TestHintNamingTwoUsersSignsNobodyIn(t *testing.T) {
	tests := []struct {
		name           string
		annEmail, twin string // ann's primary email; the other user's userName
		hint           string // what the application sends
	}{
		{"same case", "ann.lee@example.com", "ann.lee@example.com", "ann.lee@example.com"},
		{"userName in upper case", "ann.lee@example.com", "ANN.LEE@EXAMPLE.COM", "ann.lee@example.com"},
		{"hint in upper case", "ann.lee@example.com", "ann.lee@example.com", "ANN.LEE@example.com"},
		{"folded", "ross@example.com", "roſſ@example.com", "ross@example.com"},
		{"folded the other way", "roſſ@example.com", "ROSS@example.com", "Ross@Example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newIDP(t, true, withPAR)
			_, err := p.backend.Users.Update(context.Background(), "acme", p.user.ID, func(u *store.User) error {
				u.Emails = []store.MultiValue{{Value: tc.annEmail, Primary: true}}
				return nil
			})
			require.NoError(t, err)
			addUser(t, p, tc.twin, "mallory@example.com")
			e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
			f := e.beginFor(t, tc.hint)
			p.authorize(t, f, "approve")
			res, _, err := e.finish(f, f.cookies, nil)
			var denied *rp.AuthError
			require.True(t, errors.As(err, &denied), "err %v, result %+v", err, res)
			assert.Equal(t, rp.AccessDenied, denied.Code)
			assert.Nil(t, res)
		})
	}
}

// TestSharedNameDoesNotVouch, without pushed requests: mallory's primary email is ann's
// userName (in another case, or folded). The browser edits login_hint to mallory, who passes her
// own second factor; her ID token leaves out the email that names ann too, so the application's
// check refuses it.
func TestSharedNameDoesNotVouch(t *testing.T) {
	tests := []struct {
		name         string
		annName      string // ann's userName, the application's hint
		malloryEmail string
	}{
		{"same case", "ann@example.com", "ann@example.com"},
		{"upper case", "ann@example.com", "ANN@example.com"},
		{"mixed case", "ann@example.com", "Ann@Example.COM"},
		{"folded", "ross@example.com", "ROſſ@example.com"},
		{"folded the other way", "roſſ@example.com", "ROSS@EXAMPLE.COM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newIDP(t, true)
			_, err := p.backend.Users.Update(context.Background(), "acme", p.user.ID, func(u *store.User) error {
				u.UserName = tc.annName
				return nil
			})
			require.NoError(t, err)
			mallory := addUser(t, p, "mallory", tc.malloryEmail)
			e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
			f := e.beginFor(t, tc.annName)
			f.tamper(t, url.Values{"login_hint": {"mallory"}})
			p.authorize(t, f, "approve")
			res, _, err := e.finish(f, f.cookies, nil)
			require.ErrorIs(t, err, rp.ErrWrongUser)
			assert.Nil(t, res)
			assert.EqualValues(t, 1, p.tokenHits.Load(), "the provider signed mallory in: the token is what refuses her")

			// Mallory's own sign-in still works, and her token names her by userName only.
			f = e.beginFor(t, "mallory")
			p.authorize(t, f, "approve")
			res, _, err = e.finish(f, f.cookies, nil)
			require.NoError(t, err)
			assert.Equal(t, mallory.ID, res.Subject)
			assert.Equal(t, "mallory", res.PreferredUsername)
			assert.Empty(t, res.Email, "her email names ann too")
			assert.ErrorIs(t, res.CheckUser(tc.annName), rp.ErrWrongUser)
			assert.ErrorIs(t, res.CheckSubject(p.user.ID), rp.ErrWrongUser)
			assert.NoError(t, res.CheckSubject(mallory.ID))
		})
	}
}

// TestResultCheckSubject: the visid id, compared exactly.
func TestResultCheckSubject(t *testing.T) {
	res := &rp.Result{Subject: "user_01abc", PreferredUsername: "user_01xyz", Email: "ann@example.com"}
	assert.NoError(t, res.CheckSubject("user_01abc"))
	for _, sub := range []string{"", "USER_01ABC", "user_01ab", "user_01abc ", "user_01xyz", "ann@example.com"} {
		assert.ErrorIs(t, res.CheckSubject(sub), rp.ErrWrongUser, "%q", sub)
	}
	assert.ErrorIs(t, (&rp.Result{}).CheckSubject(""), rp.ErrWrongUser, "an empty id never matches an empty sub")
}
