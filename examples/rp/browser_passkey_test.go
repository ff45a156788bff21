package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// The passkey tests answer visid's WebAuthn ceremonies with Chromium's virtual authenticator
// (the DevTools protocol's WebAuthn domain): an authenticator of the device ("internal", CTAP2)
// that keeps discoverable credentials, verifies the user and is touched at once, so that
// navigator.credentials.create and get resolve with no person and no dialog. Every stack of
// these tests is newPasskeyStack's, with visid at http://localhost.

// passkeyTimeout bounds TestBrowserPasskey, whose steps share one browser.
const passkeyTimeout = 3 * time.Minute

// failedText is what visid's login page says after a wrong picture or a refused passkey.
const failedText = "That did not match. Try again."

// in is c failing t: the same tab, for a subtest of the test that opened it.
func (c *chrome) in(t *testing.T) *chrome {
	return &chrome{t: t, ctx: c.ctx, vp: c.vp}
}

// addAuthenticator adds a virtual authenticator to the tab (turning the WebAuthn domain on,
// which takes the tab's ceremonies away from any real one): CTAP 2.1 over "internal", with
// resident keys and user verification that succeeds, touched at once. With backup its
// credentials are backup eligible and backed up (a synced passkey); without, bound to it.
func (c *chrome) addAuthenticator(backup bool) webauthn.AuthenticatorID {
	c.t.Helper()
	_, err := chromedp.Call(c.ctx, webauthn.Enable, webauthn.EnableParams{})
	require.NoError(c.t, err, "WebAuthn.enable")
	res, err := chromedp.Call(c.ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{
			Protocol:                    webauthn.AuthenticatorProtocolCtap2,
			Ctap2version:                webauthn.Ctap2versionCtap21,
			Transport:                   webauthn.AuthenticatorTransportInternal,
			HasResidentKey:              true,
			HasUserVerification:         true,
			IsUserVerified:              true,
			AutomaticPresenceSimulation: true,
			DefaultBackupEligibility:    backup,
			DefaultBackupState:          backup,
		}})
	require.NoError(c.t, err, "WebAuthn.addVirtualAuthenticator")
	return res.AuthenticatorID
}

// credentialOf returns the credential that authenticator a holds for user, with its private
// key, so that it can be taken out and put back.
func (c *chrome) credentialOf(a webauthn.AuthenticatorID, user *store.User) *webauthn.Credential {
	c.t.Helper()
	res, err := chromedp.Call(c.ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: a})
	require.NoError(c.t, err, "WebAuthn.getCredentials")
	var found *webauthn.Credential
	for _, cred := range res.Credentials {
		if bytes.Equal(cred.UserHandle, []byte(user.ID)) {
			require.Nil(c.t, found, "one credential of %s in the authenticator", user.UserName)
			found = cred
		}
	}
	require.NotNil(c.t, found, "the authenticator holds a credential of %s", user.UserName)
	assert.True(c.t, found.IsResidentCredential, "a discoverable credential")
	assert.Equal(c.t, "localhost", found.RpID)
	return found
}

// removeCredential takes the credential id out of authenticator a.
func (c *chrome) removeCredential(a webauthn.AuthenticatorID, id []byte) {
	c.t.Helper()
	_, err := chromedp.Call(c.ctx, webauthn.RemoveCredential, webauthn.RemoveCredentialParams{AuthenticatorID: a, CredentialID: id})
	require.NoError(c.t, err, "WebAuthn.removeCredential")
}

// putCredential puts cred, as credentialOf returned it, back into authenticator a.
func (c *chrome) putCredential(a webauthn.AuthenticatorID, cred *webauthn.Credential) {
	c.t.Helper()
	// webauthn.AddCredentialParams always sends generateCmtgKeyOnNextOperation, which Chromium
	// refuses for an authenticator without the cmtgKey extension, even when false: the
	// credential goes without it.
	type credential struct {
		CredentialID         []byte `json:"credentialId"`
		IsResidentCredential bool   `json:"isResidentCredential"`
		RpID                 string `json:"rpId"`
		PrivateKey           []byte `json:"privateKey"`
		UserHandle           []byte `json:"userHandle"`
		SignCount            int64  `json:"signCount"`
		BackupEligibility    bool   `json:"backupEligibility"`
		BackupState          bool   `json:"backupState"`
	}
	type params struct {
		AuthenticatorID webauthn.AuthenticatorID `json:"authenticatorId"`
		Credential      credential               `json:"credential"`
	}
	add := cdp.Command[params, cdp.Empty]{Method: webauthn.CommandAddCredential}
	_, err := chromedp.Call(c.ctx, add, params{AuthenticatorID: a, Credential: credential{
		CredentialID: cred.CredentialID, IsResidentCredential: cred.IsResidentCredential, RpID: cred.RpID,
		PrivateKey: cred.PrivateKey, UserHandle: cred.UserHandle, SignCount: int64(cred.SignCount),
		BackupEligibility: cred.BackupEligibility, BackupState: cred.BackupState,
	}})
	require.NoError(c.t, err, "WebAuthn.addCredential")
}

// passkeyLink opens an administrator's enrollment link for user and goes on to the enrollment
// page, which offers "Add a passkey".
func (c *chrome) passkeyLink(s *pictureStack, user *store.User) {
	c.t.Helper()
	l, err := oidc2fa.NewEnrollmentLink(c.t.Context(), s.cfg, oidc2fa.EnrollmentRequest{Tenant: "demo", User: user.ID})
	require.NoError(c.t, err)
	c.open(l.URL, "#continue")
	c.press("#continue", "#enroll-form")
	c.waitFor("Add a passkey", `document.querySelector("#passkey-start:not([disabled])") !== null`)
}

// enrollPasskey adds a passkey of the tab's virtual authenticator to user with an
// administrator's enrollment link, pressing "Add a passkey", and checks that visid stored it.
func (c *chrome) enrollPasskey(s *pictureStack, user *store.User) store.Passkey {
	c.t.Helper()
	before, err := s.passkeys.List(c.t.Context(), "demo", user.ID)
	require.NoError(c.t, err)
	c.passkeyLink(s, user)
	c.press("#passkey-start", "p.lead")
	require.Equal(c.t, visidText(c.vp, "passkey.done.title"), c.text("h1"), "visid's page after the enrollment")
	assert.Equal(c.t, visidText(c.vp, "passkey.done.message"), c.text("p.lead"))
	after, err := s.passkeys.List(c.t.Context(), "demo", user.ID)
	require.NoError(c.t, err)
	require.Len(c.t, after, len(before)+1, "visid stored the passkey of %s", user.UserName)
	return after[len(after)-1]
}

// passkeySignIn signs in with the password at the app and waits for visid's page, which offers
// "Use a passkey".
func (c *chrome) passkeySignIn(app *appRun, email, password string) {
	c.t.Helper()
	c.open(app.url+"/", `input[name="email"]`)
	c.passwordForm(email, password, actionSignIn, "#passkey-start")
}

// amr is what the app's signed-in page lists as the ID token's amr.
func (c *chrome) amr() string {
	c.t.Helper()
	return eval[string](c, `(() => { const dt = [...document.querySelectorAll("dt")].find(d => d.textContent.includes("(amr)"));
		return dt ? dt.nextElementSibling.textContent.trim() : ""; })()`)
}

// signOut signs out of the app, whose signed-in page the browser shows.
func (c *chrome) signOut() {
	c.t.Helper()
	c.press(`form[action="/logout"] button`, `input[name="email"]`)
}

// notSignedIn checks that the app has signed nobody in: its start page asks for the password.
func (c *chrome) notSignedIn(app *appRun) {
	c.t.Helper()
	c.open(app.url+"/", "h1")
	assert.Equal(c.t, "Sign in", c.text("h1"), "the app signed nobody in")
}

// holdPasskeyAnswer presses "Use a passkey" on visid's page with the form's submit replaced, on
// this page only, by one that keeps the browser's answer, and returns the answer: the value of
// #passkey-credential that passkey.js would have posted.
func (c *chrome) holdPasskeyAnswer() string {
	c.t.Helper()
	c.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("passkey-form").submit = function () {
		window.heldAnswer = document.getElementById("passkey-credential").value; }`))
	c.do(chromedp.WaitEnabled(chromedp.CSS("#passkey-start")), chromedp.Click(chromedp.CSS("#passkey-start")))
	c.waitFor("the authenticator's answer", `typeof window.heldAnswer === "string" && window.heldAnswer !== ""`)
	return eval[string](c, `window.heldAnswer`)
}

// postPasskeyAnswer posts answer with visid's passkey form, as passkey.js does, and waits for
// the next page, which has an element matching next.
func (c *chrome) postPasskeyAnswer(answer, next string) {
	c.t.Helper()
	lit, err := json.Marshal(answer)
	require.NoError(c.t, err)
	c.markPage()
	c.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const f = document.getElementById("passkey-form");
		document.getElementById("passkey-credential").value = %s; HTMLFormElement.prototype.submit.call(f); })()`, lit)))
	c.waitPage(next)
}

// axNameDescription is the accessible name and description Chromium computes for the element
// with id, as a screen reader gets them.
func (c *chrome) axNameDescription(id string) (name, description string) {
	c.t.Helper()
	obj, err := chromedp.Call(c.ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: fmt.Sprintf("document.getElementById(%q)", id)})
	require.NoError(c.t, err)
	require.NotNil(c.t, obj.Result, "#%s", id)
	require.NotEmpty(c.t, obj.Result.ObjectID, "#%s is on the page", id)
	no := false
	tree, err := chromedp.Call(c.ctx, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{ObjectID: obj.Result.ObjectID, FetchRelatives: &no})
	require.NoError(c.t, err, "Accessibility.getPartialAXTree")
	require.NotEmpty(c.t, tree.Nodes)
	str := func(v *accessibility.Value) string {
		var s string
		if v != nil && len(v.Value) > 0 {
			require.NoError(c.t, json.Unmarshal(v.Value, &s))
		}
		return s
	}
	n := tree.Nodes[0]
	require.False(c.t, n.Ignored, "#%s is in the accessibility tree", id)
	return str(n.Name), str(n.Description)
}

// TestBrowserPasskey enrolls passkeys and signs in with them in Chromium, through the app: an
// administrator's link gives alice a passkey, with which she signs in (amr hwk and mfa); a
// passkey of mallory's, or an answer replayed from an earlier sign-in, is refused as a wrong
// picture is; carol, who has no factor, adds a synced passkey through the app's set-up flow and
// signs in with it on the page that offers it alone (amr swk and mfa); with passkeys off for
// the tenant, visid offers none. The steps share one browser and one stack, each going on from
// where the one before left it.
func TestBrowserPasskey(t *testing.T) {
	exe := findBrowser(t)
	s := newPasskeyStack(t)
	top := newChromeFor(t, exe, desktop, passkeyTimeout)
	ctx := t.Context()
	device := top.addAuthenticator(false)
	step := func(name string, f func(t *testing.T, c *chrome)) {
		t.Helper()
		start := time.Now()
		if !t.Run(name, func(t *testing.T) { f(t, top.in(t)) }) {
			t.Fatalf("%s failed: the steps after it need what it does", name)
		}
		t.Logf("%s: %s", name, time.Since(start).Round(time.Millisecond))
	}

	var alicePasskey store.Passkey
	step("administrator's link adds a passkey", func(t *testing.T, c *chrome) {
		c.passkeyLink(s, s.alice)
		assert.Equal(t, visidText(c.vp, "enroll.title.passkey"), c.text("h1"))
		assert.Equal(t, visidText(c.vp, "passkey.enroll.button"), c.text("#passkey-start"))
		c.press("#passkey-start", "p.lead")
		assert.Equal(t, visidText(c.vp, "passkey.done.title"), c.text("h1"))
		ps, err := s.passkeys.List(ctx, "demo", s.alice.ID)
		require.NoError(t, err)
		require.Len(t, ps, 1, "alice's passkey is stored")
		alicePasskey = ps[0]
		cred := c.credentialOf(device, s.alice)
		assert.Equal(t, cred.CredentialID, alicePasskey.ID, "the authenticator's credential")
		assert.False(t, alicePasskey.BackupEligible, "a passkey bound to its device")
		assert.Equal(t, []string{"internal"}, alicePasskey.Transports)
		assert.True(t, alicePasskey.LastUsed.IsZero())
		_, err = s.pics.Get(ctx, "demo", s.alice.ID)
		assert.NoError(t, err, "alice keeps her picture password")
	})

	step("alice signs in with it", func(t *testing.T, c *chrome) {
		c.passkeySignIn(s.app, demoEmail, demoPassword)
		assert.True(t, eval[bool](c, `document.getElementById("login-form") !== null`), "the picture is offered too")
		assert.Equal(t, visidText(c.vp, "passkey.login.button"), c.text("#passkey-start"))
		c.press("#passkey-start", "p.hint")
		require.Equal(t, "alice@example.com passed both factors", c.appHeading())
		assert.Contains(t, c.text("dl"), s.alice.ID, "the visid subject")
		assert.Equal(t, "hwk, mfa", c.amr(), "amr of a passkey bound to its device")
		ps, err := s.passkeys.List(ctx, "demo", s.alice.ID)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		assert.False(t, ps[0].LastUsed.IsZero(), "the use is recorded")
		assert.Greater(t, ps[0].SignCount, alicePasskey.SignCount, "the counter moved forward")
		alicePasskey = ps[0]
		c.signOut()
	})

	step("another user's passkey is refused", func(t *testing.T, c *chrome) {
		mallorys := c.enrollPasskey(s, s.mallory)
		// The authenticator answers with mallory's passkey alone: alice's is taken out.
		alices := c.credentialOf(device, s.alice)
		c.removeCredential(device, alices.CredentialID)

		c.passkeySignIn(s.app, demoEmail, demoPassword)
		c.press("#passkey-start", "p.message")
		assert.Equal(t, failedText, c.text("p.message"))
		assert.True(t, eval[bool](c, `document.getElementById("passkey-start") !== null`), "the passkey is offered again")
		ps, err := s.passkeys.List(ctx, "demo", s.mallory.ID)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		assert.Equal(t, mallorys.ID, ps[0].ID)
		assert.True(t, ps[0].LastUsed.IsZero(), "mallory's passkey was not used")
		c.notSignedIn(s.app)

		// Back to alice's passkey alone.
		c.removeCredential(device, c.credentialOf(device, s.mallory).CredentialID)
		c.putCredential(device, alices)
	})

	step("a replayed answer is refused", func(t *testing.T, c *chrome) {
		c.passkeySignIn(s.app, demoEmail, demoPassword)
		first := c.holdPasskeyAnswer()
		c.postPasskeyAnswer(first, "p.hint")
		require.Equal(t, "alice@example.com passed both factors", c.appHeading(), "the answer, posted once")
		c.signOut()
		used, err := s.passkeys.List(ctx, "demo", s.alice.ID)
		require.NoError(t, err)

		// A new sign-in asks for a new answer; the old one is posted in its place.
		c.passkeySignIn(s.app, demoEmail, demoPassword)
		fresh := c.holdPasskeyAnswer()
		require.NotEqual(t, first, fresh, "a new challenge gets a new answer")
		c.postPasskeyAnswer(first, "p.message")
		assert.Equal(t, failedText, c.text("p.message"))
		after, err := s.passkeys.List(ctx, "demo", s.alice.ID)
		require.NoError(t, err)
		assert.Equal(t, used, after, "the replay changed nothing")

		// The challenge was taken by the replay: the fresh answer to it is refused too.
		c.postPasskeyAnswer(fresh, "p.message")
		assert.Equal(t, failedText, c.text("p.message"))
		c.notSignedIn(s.app)
	})

	step("carol sets up a synced passkey through the app and signs in with it", func(t *testing.T, c *chrome) {
		// A phone's passkey, which may be synced: another authenticator takes the place of
		// the first.
		_, err := chromedp.Call(c.ctx, webauthn.RemoveVirtualAuthenticator, webauthn.RemoveVirtualAuthenticatorParams{AuthenticatorID: device})
		require.NoError(t, err)
		synced := c.addAuthenticator(true)

		c.open(s.app.url+"/", `input[name="email"]`)
		c.passwordForm(carolEmail, carolPassword, actionEnroll, "#continue")
		c.press("#continue", "#enroll-form")
		assert.Equal(t, visidText(c.vp, "enroll.client.passkey", "client", "Example app"), c.text("p.client"))
		c.press("#passkey-start", "p.hint")
		assert.Equal(t, "Your picture password is set up", c.text("h1"), "the app's page after the enrollment")
		ps, err := s.passkeys.List(ctx, "demo", s.carol.ID)
		require.NoError(t, err)
		require.Len(t, ps, 1, "carol's passkey is stored")
		assert.True(t, ps[0].BackupEligible)
		assert.True(t, ps[0].BackupState)
		assert.Equal(t, c.credentialOf(synced, s.carol).CredentialID, ps[0].ID)

		c.passkeySignIn(s.app, carolEmail, carolPassword)
		assert.True(t, eval[bool](c, `document.getElementById("login-form") === null && document.getElementById("picture") === null`),
			"carol has no picture password: the page offers the passkey alone")
		assert.Contains(t, eval[string](c, `document.getElementById("passkey-start").className`), "primary")
		c.press("#passkey-start", "p.hint")
		require.Equal(t, "carol@example.com passed both factors", c.appHeading())
		assert.Contains(t, c.text("dl"), s.carol.ID)
		assert.Equal(t, "swk, mfa", c.amr(), "amr of a passkey that may be synced")
		c.signOut()
	})

	step("no passkey when the tenant turns them off", func(t *testing.T, c *chrome) {
		_, err := s.cfg.Tenants.Update(ctx, "demo", func(tn *store.Tenant) error {
			tn.SecondFactor = store.SecondFactorPicture
			return nil
		})
		require.NoError(t, err)
		c.signIn(s.app, demoEmail, demoPassword)
		assert.True(t, eval[bool](c, `document.getElementById("passkey-start") === null && document.getElementById("passkey-form") === null`),
			"no passkey on alice's page")
		assert.False(t, eval[bool](c, `[...document.scripts].some(s => s.src.includes("passkey"))`), "nor its script")
		assert.Equal(t, visidText(c.vp, "login.title"), c.text("h1"))
	})
}
