package picture_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/passkeytest"
	"github.com/visid/visid/internal/testclock"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// TestPasskeyEnrollAndSignIn: an enrollment link of a tenant that allows passkeys offers one;
// the passkey it stores ends the enrollment, and signs the user in with the amr of its kind.
func TestPasskeyEnrollAndSignIn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		synced bool
		client bool
		amr    []any
	}{
		{name: "device-bound, administrator's link", amr: []any{"hwk", "mfa"}},
		{name: "synced, administrator's link", synced: true, amr: []any{"swk", "mfa"}},
		{name: "device-bound, client's link", client: true, amr: []any{"hwk", "mfa"}},
		{name: "synced, client's link", synced: true, client: true, amr: []any{"swk", "mfa"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPasskeyEnv(t)
			ctx := context.Background()
			dev := e.device()
			dev.BackupEligible, dev.BackupState = tc.synced, tc.synced
			var b *browser
			var pg *page
			if tc.client {
				b, _, pg = e.openClientEnrollment("carol")
			} else {
				b, _, pg = e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
			}
			require.True(t, offersPasskey(pg), "the enrollment offers a passkey")
			assert.Contains(t, pg.body, "Set up a way to confirm it")
			assert.Contains(t, pg.body, `id="enroll-form"`, "and the picture")
			cred, err := dev.Create(e.passkeyOptions(b, pg))
			require.NoError(t, err)
			done := e.postPasskey(b, pg, cred)
			if tc.client {
				q := toClient(t, done)
				assert.Equal(t, "complete", q.Get("enrollment"))
				assert.Equal(t, "es", q.Get("state"))
			} else {
				require.Equal(t, http.StatusOK, done.status, done.body)
				assert.Contains(t, done.body, "Passkey ready")
				assert.Contains(t, done.body, "Your passkey is added.")
			}
			held, err := e.b.Passkeys.List(ctx, "acme", e.carol.ID)
			require.NoError(t, err)
			require.Len(t, held, 1)
			assert.Equal(t, dev.Credentials()[0].ID, held[0].ID)
			assert.Equal(t, tc.synced, held[0].BackupEligible)
			ev, err := e.b.Events.List(ctx, "acme", "", 100)
			require.NoError(t, err)
			require.Len(t, ev, 1)
			assert.Equal(t, store.EventEnrollmentCompleted, ev[0].Type)

			q := toClient(t, e.passkeySignIn(dev, nil, "carol"))
			require.NotEmpty(t, q.Get("code"), "signed in: %v", q)
			claims := e.idToken(q.Get("code"))
			assert.Equal(t, e.carol.ID, claims["sub"])
			assert.Equal(t, tc.amr, claims["amr"])
			held, err = e.b.Passkeys.List(ctx, "acme", e.carol.ID)
			require.NoError(t, err)
			assert.Equal(t, uint32(1), held[0].SignCount, "the counter is recorded")
			assert.False(t, held[0].LastUsed.IsZero())
			assert.NotContains(t, e.log.String(), cred, "the credential is never logged")
		})
	}
}

// TestPasskeyPicturePasswordAMR: the picture's amr stays "pwd" for a user who also has a passkey.
func TestPasskeyPicturePasswordAMR(t *testing.T) {
	e := newPasskeyEnv(t)
	e.enrollPasskey(e.device(), "ann")
	b := e.browser()
	loginURL, pg := e.login(b, "ann")
	q := toClient(t, e.attempt(b, loginURL, pg, right))
	assert.Equal(t, []any{"pwd"}, e.idToken(q.Get("code"))["amr"])
}

// TestPasskeyLoginPages: a user with passkeys only sees the passkey alone; a user with both
// factors sees both; every other hint sees a picture and, when the tenant allows passkeys, the
// passkey button, so the page tells nobody who has a passkey.
func TestPasskeyLoginPages(t *testing.T) {
	e := newPasskeyEnv(t)
	ctx := context.Background()
	dev := e.device()
	e.enrollPasskey(dev, "carol")
	e.enrollPasskey(dev, "ann")
	dan, err := e.b.Users.Create(ctx, "acme", store.User{UserName: "dan", Active: true})
	require.NoError(t, err)
	require.NoError(t, e.auth.Enroll(ctx, "acme", dan.ID, "farm", newPoints))

	page := func(hint string) *page {
		_, pg := e.login(e.browser(), hint)
		return pg
	}
	only := page("carol")
	assert.True(t, offersPasskey(only))
	assert.NotContains(t, only.body, `id="login-form"`, "no picture")
	assert.NotContains(t, only.body, `id="picture"`)
	assert.NotContains(t, only.body, "picture.js", "no picture script")
	assert.Contains(t, only.body, `class="button primary"`, "the passkey is the way through")

	// ann (both), dan (a picture only), bob (inactive, a picture), erin (no such user), and a
	// user with no factor at all look alike: a picture and a passkey button.
	_, err = e.b.Users.Create(ctx, "acme", store.User{UserName: "fred", Active: true})
	require.NoError(t, err)
	shapes := map[string]string{}
	for _, hint := range []string{"ann", "dan", "bob", "erin", "fred"} {
		pg := page(hint)
		assert.True(t, offersPasskey(pg), hint)
		assert.Contains(t, pg.body, `id="login-form"`, hint)
		assert.Contains(t, pg.body, `id="picture"`, hint)
		shapes[hint] = pageShape(pg.body)
	}
	for hint, shape := range shapes {
		assert.Equal(t, shapes["ann"], shape, "%s's page is shaped as ann's", hint)
	}

	// The same tenant without passkeys offers none, to anyone.
	_, err = e.b.Tenants.Update(ctx, "acme", func(t *store.Tenant) error { t.SecondFactor = store.SecondFactorPicture; return nil })
	require.NoError(t, err)
	for _, hint := range []string{"ann", "carol", "erin"} {
		pg := page(hint)
		assert.False(t, offersPasskey(pg), hint)
		assert.Contains(t, pg.body, `id="picture"`, hint)
		assert.NotContains(t, pg.body, "passkey.js", hint)
		assert.NotContains(t, pg.header.Get("Content-Security-Policy"), "connect-src", hint)
	}
}

// pageShape is a page without what differs between sign-ins: the CSRF token, the interaction
// in URLs, the image's title and the number of points.
func pageShape(body string) string {
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`value="[A-Za-z0-9_-]{20,}"`),
		regexp.MustCompile(`/login/acme/[A-Za-z0-9_-]+`),
		regexp.MustCompile(`alt="[^"]*"`),
	} {
		body = re.ReplaceAllString(body, "X")
	}
	return body
}

// TestPasskeyNeedsADomain: a provider whose BaseURL names an address offers no passkey, whatever
// the tenant allows: a relying party ID is a domain.
func TestPasskeyNeedsADomain(t *testing.T) {
	e := newEnvWith(t, envOptions{secondFactor: store.SecondFactorPictureOrPasskey})
	b := e.browser()
	loginURL, pg := e.login(b, "ann")
	assert.False(t, offersPasskey(pg))
	assert.Equal(t, http.StatusNotFound, b.post(loginURL+"/passkey/options", url.Values{"csrf": {pg.csrf(t)}}).status)
}

// refusal is a passkey answer the provider must refuse: it returns the credential to post on
// the sign-in page pg of browser b, asking for options or not.
type refusal func(t *testing.T, e *env, b *browser, pg *page) string

// signInRefused runs a sign-in of hint whose first attempt is a wrong picture and whose
// following attempts are answer's, and checks that each looks exactly like the wrong picture
// and that the sign-in ends after MaxFailures attempts.
func (e *env) signInRefused(hint string, answer refusal) {
	t := e.t
	t.Helper()
	b := e.browser()
	loginURL, pg := e.login(b, hint)
	wrongPicture := e.attempt(b, loginURL, pg, wrong)
	require.Equal(t, http.StatusSeeOther, wrongPicture.status)
	require.Equal(t, loginURL, wrongPicture.location)
	after := b.get(loginURL)
	require.Contains(t, after.body, "That did not match. Try again.")
	for i := 2; i <= picture.DefaultMaxFailures; i++ {
		p := e.postPasskey(b, pg, answer(t, e, b, pg))
		if i == picture.DefaultMaxFailures {
			q := toClient(t, p)
			assert.Equal(t, "access_denied", q.Get("error"), "the sign-in ends after %d attempts", i)
			assert.Empty(t, q.Get("code"))
			return
		}
		assert.Equal(t, wrongPicture.status, p.status, "attempt %d", i)
		assert.Equal(t, wrongPicture.location, p.location, "attempt %d", i)
		assert.Equal(t, wrongPicture.body, p.body, "attempt %d", i)
		again := b.get(loginURL)
		assert.Equal(t, pageShape(after.body), pageShape(again.body), "attempt %d: the page as after a wrong picture", i)
		pg = again
	}
}

// TestPasskeyRefused: every passkey that must not pass is answered as a wrong picture, and the
// sign-in ends after MaxFailures attempts, whichever way they came.
func TestPasskeyRefused(t *testing.T) {
	get := func(t *testing.T, e *env, b *browser, pg *page, dev *passkeytest.Authenticator, c *passkeytest.Credential) *passkeytest.Assertion {
		as, err := dev.Assert(e.passkeyOptions(b, pg), c)
		require.NoError(t, err)
		return as
	}
	for _, tc := range []struct {
		name   string
		reason string // as logged
		// setup enrolls what the case needs and returns the hint that signs in and the answer.
		setup func(t *testing.T, e *env) (string, refusal)
	}{{
		name: "another user's passkey", reason: "the passkey belongs to another user",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			carols := e.enrollPasskey(dev, "carol")
			e.enrollPasskey(dev, "ann")
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				return get(t, e, b, pg, dev, carols).JSON()
			}
		},
	}, {
		name: "another user's passkey, to a user with passkeys only", reason: "the passkey belongs to another user",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			e.enrollPasskey(dev, "carol")
			anns := e.enrollPasskey(dev, "ann")
			return "carol", func(t *testing.T, e *env, b *browser, pg *page) string {
				assert.NotContains(t, pg.body, `id="picture"`, "carol's page has no picture")
				return get(t, e, b, pg, dev, anns).JSON()
			}
		},
	}, {
		name: "another user's passkey with this user's handle", reason: "the passkey belongs to another user",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			carols := e.enrollPasskey(dev, "carol")
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				as := get(t, e, b, pg, dev, carols)
				as.UserHandle = []byte(e.ann.ID)
				return as.JSON()
			}
		},
	}, {
		name: "an assertion of an earlier sign-in", reason: "Error validating challenge",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			dev.CounterStep = 0 // an authenticator without a counter: only the challenge tells
			e.enrollPasskey(dev, "ann")
			b := e.browser()
			_, pg := e.login(b, "ann")
			old, err := dev.Get(e.passkeyOptions(b, pg))
			require.NoError(t, err)
			require.NotEmpty(t, toClient(t, e.postPasskey(b, pg, old)).Get("code"))
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				e.passkeyOptions(b, pg)
				return old
			}
		},
	}, {
		name: "an assertion of a challenge asked for before the latest", reason: "Error validating challenge",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			e.enrollPasskey(dev, "ann")
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				first := get(t, e, b, pg, dev, nil).JSON()
				e.passkeyOptions(b, pg)
				return first
			}
		},
	}, {
		name: "no options asked for", reason: "no passkey challenge is pending",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			e.enrollPasskey(dev, "ann")
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				cred, err := dev.Get([]byte(`{"publicKey":{"challenge":"c2VsZi1tYWRlIGNoYWxsZW5nZSBvZiAzMiBieXRlcyEh","rpId":"localhost"}}`))
				require.NoError(t, err)
				return cred
			}
		},
	}, {
		name: "user not verified", reason: "the assertion is not valid",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			e.enrollPasskey(dev, "ann")
			dev.UserVerified = false
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				return get(t, e, b, pg, dev, nil).JSON()
			}
		},
	}, {
		name: "counter backwards", reason: "did not move forward",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			c := e.enrollPasskey(dev, "ann")
			clone := c.Clone() // at 0
			require.NotEmpty(t, toClient(t, e.passkeySignIn(dev, c, "ann")).Get("code"))
			require.NotEmpty(t, toClient(t, e.passkeySignIn(dev, c, "ann")).Get("code")) // at 2
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				clone.SetCounter(0)
				return get(t, e, b, pg, dev, clone).JSON() // signs 1
			}
		},
	}, {
		name: "another origin", reason: "Error validating origin",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			e.enrollPasskey(dev, "ann")
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				as := get(t, e, b, pg, dev, nil)
				as.ClientData.Origin = "https://evil.example"
				return as.JSON()
			}
		},
	}, {
		name: "another relying party ID", reason: "the assertion is not valid",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			e.enrollPasskey(dev, "ann")
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				as := get(t, e, b, pg, dev, nil)
				as.RPID = "evil.example"
				return as.JSON()
			}
		},
	}, {
		name: "an inactive user", reason: "inactive user",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			e.enrollPasskey(dev, "carol")
			_, err := e.b.Users.Update(context.Background(), "acme", e.carol.ID, func(u *store.User) error {
				u.Active = false
				return nil
			})
			require.NoError(t, err)
			return "carol", func(t *testing.T, e *env, b *browser, pg *page) string {
				assert.Contains(t, pg.body, `id="picture"`, "an inactive user's page has a picture")
				return get(t, e, b, pg, dev, nil).JSON()
			}
		},
	}, {
		name: "an unknown user with someone's passkey", reason: "unknown user",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			e.enrollPasskey(dev, "carol")
			return "nobody", func(t *testing.T, e *env, b *browser, pg *page) string {
				return get(t, e, b, pg, dev, nil).JSON()
			}
		},
	}, {
		name: "malformed", reason: "does not parse",
		setup: func(t *testing.T, e *env) (string, refusal) {
			e.enrollPasskey(e.device(), "ann")
			bad := []string{"", "not json", `{"id":"AA","type":"public-key","response":{}}`}
			i := 0
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				e.passkeyOptions(b, pg)
				i++
				return bad[(i-1)%len(bad)]
			}
		},
	}, {
		name: "oversized", reason: "missing or too large",
		setup: func(t *testing.T, e *env) (string, refusal) {
			dev := e.device()
			e.enrollPasskey(dev, "ann")
			return "ann", func(t *testing.T, e *env, b *browser, pg *page) string {
				var cred map[string]any
				require.NoError(t, json.Unmarshal([]byte(get(t, e, b, pg, dev, nil).JSON()), &cred))
				cred["clientExtensionResults"] = map[string]any{"padding": strings.Repeat("x", 20<<10)}
				out, _ := json.Marshal(cred)
				return string(out)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPasskeyEnv(t)
			hint, answer := tc.setup(t, e)
			e.signInRefused(hint, answer)
			assert.Contains(t, e.log.String(), tc.reason)
		})
	}
}

// TestPasskeyTenantOff: where the tenant does not allow passkeys, the options are not found and
// a posted assertion, even a valid one of a passkey the user holds, fails as a wrong picture.
func TestPasskeyTenantOff(t *testing.T) {
	e := newPasskeyEnv(t)
	ctx := context.Background()
	dev := e.device()
	e.enrollPasskey(dev, "ann")
	// An options answer of the time the tenant allowed passkeys, to sign.
	b := e.browser()
	_, pg := e.login(b, "ann")
	options := e.passkeyOptions(b, pg)
	_, err := e.b.Tenants.Update(ctx, "acme", func(t *store.Tenant) error { t.SecondFactor = ""; return nil })
	require.NoError(t, err)

	e.signInRefused("ann", func(t *testing.T, e *env, b *browser, pg *page) string {
		assert.False(t, offersPasskey(pg))
		optionsURL, _ := e.passkeyURLs(pg)
		assert.Equal(t, http.StatusNotFound, b.post(optionsURL, url.Values{"csrf": {pg.csrf(t)}}).status)
		cred, err := dev.Get(options)
		require.NoError(t, err)
		return cred
	})
	assert.Contains(t, e.log.String(), "passkeys are off for the tenant")

	// The enrollment neither offers nor stores one.
	eb, enrollURL, epg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	assert.False(t, offersPasskey(epg))
	assert.Equal(t, http.StatusNotFound, eb.post(enrollURL+"/passkey/options", url.Values{"csrf": {epg.csrf(t)}}).status)
	p := eb.post(enrollURL+"/passkey", url.Values{"csrf": {epg.csrf(t)}, "credential": {"{}"}})
	assert.Equal(t, http.StatusSeeOther, p.status)
	held, err := e.b.Passkeys.List(ctx, "acme", e.carol.ID)
	require.NoError(t, err)
	assert.Empty(t, held)
}

// TestPasskeySharesTheLock: a network locked by wrong pictures is locked for the passkey too,
// while the lock holds; a passkey's success resets the failure counts as a picture's does.
func TestPasskeySharesTheLock(t *testing.T) {
	clk := testclock.At(time.Now().Truncate(time.Second))
	e := newPasskeyEnv(t, func(c *picture.Config) { c.Now = clk.Now })
	ctx := context.Background()
	dev := e.device()
	e.enrollPasskey(dev, "ann")
	const from = "203.0.113.7"

	signIn := func() (*browser, string, *page) {
		b := e.browserFrom(from)
		loginURL, pg := e.login(b, "ann")
		return b, loginURL, pg
	}
	// Two wrong pictures, then a passkey: the counts go back to 0.
	for range 2 {
		b, loginURL, pg := signIn()
		require.Equal(t, loginURL, e.attempt(b, loginURL, pg, wrong).location)
	}
	c, err := e.b.Pictures.Get(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	require.Equal(t, 2, c.Failures)
	b, _, pg := signIn()
	cred, err := dev.Get(e.passkeyOptions(b, pg))
	require.NoError(t, err)
	require.NotEmpty(t, toClient(t, e.postPasskey(b, pg, cred)).Get("code"))
	c, err = e.b.Pictures.Get(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Equal(t, 0, c.Failures, "a passkey's success resets the failures")
	nf, err := e.b.Pictures.NetworkFailures(ctx, "acme", e.ann.ID, "203.0.113.0/24")
	require.NoError(t, err)
	assert.Equal(t, 0, nf.Failures)

	// Five wrong pictures lock the network: the passkey is refused there while it holds.
	assert.Equal(t, "access_denied", e.signInFrom(from, "ann", repeat(wrong, picture.DefaultMaxFailures)...).Get("error"))
	locked, err := e.auth.Locked(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	require.True(t, locked)
	b, loginURL, pg := signIn()
	cred, err = dev.Get(e.passkeyOptions(b, pg))
	require.NoError(t, err)
	p := e.postPasskey(b, pg, cred)
	assert.Equal(t, http.StatusSeeOther, p.status)
	assert.Equal(t, loginURL, p.location, "refused as a wrong picture")
	assert.Contains(t, b.get(loginURL).body, "That did not match. Try again.")
	assert.Contains(t, e.log.String(), "reason=locked")
	stored, err := e.b.Passkeys.List(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Equal(t, uint32(1), stored[0].SignCount, "a refused passkey is not recorded as used")

	// From another network it passes, and leaves the locked network locked.
	b2 := e.browserFrom("198.51.100.7")
	_, pg2 := e.login(b2, "ann")
	cred, err = dev.Get(e.passkeyOptions(b2, pg2))
	require.NoError(t, err)
	require.NotEmpty(t, toClient(t, e.postPasskey(b2, pg2, cred)).Get("code"))
	nf, err = e.b.Pictures.NetworkFailures(ctx, "acme", e.ann.ID, "203.0.113.0/24")
	require.NoError(t, err)
	assert.Equal(t, picture.DefaultMaxFailures+1, nf.Failures, "the locked network's count stands")

	// Once the lock has passed, the passkey passes there and unlocks it.
	clk.Advance(e.lockedUntil(t).Sub(clk.Now()) + time.Second)
	b, _, pg = signIn()
	cred, err = dev.Get(e.passkeyOptions(b, pg))
	require.NoError(t, err)
	require.NotEmpty(t, toClient(t, e.postPasskey(b, pg, cred)).Get("code"))
	nf, err = e.b.Pictures.NetworkFailures(ctx, "acme", e.ann.ID, "203.0.113.0/24")
	require.NoError(t, err)
	assert.Equal(t, 0, nf.Failures)
	c, err = e.b.Pictures.Get(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Equal(t, 0, c.Failures)
}

// TestPasskeyAssertionReplayed: an assertion that signed in signs in no more: posted again in its
// sign-in, which has ended, or in another (TestPasskeyRefused).
func TestPasskeyAssertionReplayed(t *testing.T) {
	e := newPasskeyEnv(t)
	dev := e.device()
	e.enrollPasskey(dev, "carol")
	b := e.browser()
	_, pg := e.login(b, "carol")
	cred, err := dev.Get(e.passkeyOptions(b, pg))
	require.NoError(t, err)
	require.NotEmpty(t, toClient(t, e.postPasskey(b, pg, cred)).Get("code"))
	again := e.postPasskey(b, pg, cred)
	assert.Equal(t, http.StatusBadRequest, again.status, "the sign-in has ended")
	assert.Empty(t, again.location)
}

// TestPasskeyAssertionAtOnce: of two POSTs of one valid assertion at once, exactly one signs in.
func TestPasskeyAssertionAtOnce(t *testing.T) {
	e := newPasskeyEnv(t)
	dev := e.device()
	e.enrollPasskey(dev, "carol")
	for range 5 {
		b := e.browser()
		_, pg := e.login(b, "carol")
		cred, err := dev.Get(e.passkeyOptions(b, pg))
		require.NoError(t, err)
		_, action := e.passkeyURLs(pg)
		form := url.Values{"csrf": {pg.csrf(t)}, "credential": {cred}}
		answers := make([]*http.Response, 2)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodPost, action, strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				resp, err := b.c.Do(req)
				if err == nil {
					resp.Body.Close()
					answers[i] = resp
				}
			}()
		}
		wg.Wait()
		codes := 0
		for _, resp := range answers {
			require.NotNil(t, resp)
			if loc, err := url.Parse(resp.Header.Get("Location")); err == nil && loc.Query().Get("code") != "" {
				codes++
			}
		}
		assert.Equal(t, 1, codes, "exactly one POST signs in")
	}
}

// TestPasskeyPageHeaders: a page that offers a passkey lets passkey.js ask for options
// (connect-src 'self'), and passkey.js is served.
func TestPasskeyPageHeaders(t *testing.T) {
	e := newPasskeyEnv(t)
	e.enrollPasskey(e.device(), "carol")
	check := func(b *browser, pg *page) {
		t.Helper()
		assert.Contains(t, pg.header.Get("Content-Security-Policy"), "connect-src 'self'")
		m := regexp.MustCompile(`<script src="([^"]*passkey\.js)"`).FindStringSubmatch(pg.body)
		require.NotNil(t, m)
		js := b.get(e.base + html.UnescapeString(m[1]))
		assert.Equal(t, http.StatusOK, js.status)
		assert.Equal(t, "text/javascript; charset=utf-8", js.header.Get("Content-Type"))
		assert.Contains(t, js.body, "navigator.credentials.get")
	}
	for _, hint := range []string{"ann", "carol", "nobody"} {
		b := e.browser()
		_, pg := e.login(b, hint)
		check(b, pg)
	}
	b, _, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	check(b, pg)
	options, _ := e.passkeyURLs(pg)
	assert.Equal(t, http.StatusMethodNotAllowed, b.get(options).status)
	assert.Equal(t, http.StatusForbidden, b.post(options, url.Values{}).status, "no CSRF token")
}

// TestPasskeyAttemptsAtOnce: failed attempts sent at once each count towards the sign-in's
// MaxFailures: after MaxFailures-1 of them, the next attempt ends it.
func TestPasskeyAttemptsAtOnce(t *testing.T) {
	e := newPasskeyEnv(t, func(c *picture.Config) { c.Credentials = slowFailure{c.Credentials} })
	e.enrollPasskey(e.device(), "ann")
	for range 3 {
		require.NoError(t, e.auth.Unlock(context.Background(), "acme", e.ann.ID))
		b := e.browser()
		_, pg := e.login(b, "ann")
		_, action := e.passkeyURLs(pg)
		form := url.Values{"csrf": {pg.csrf(t)}, "credential": {"{}"}}
		var wg sync.WaitGroup
		for range picture.DefaultMaxFailures - 1 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodPost, action, strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if resp, err := b.c.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		q := toClient(t, e.postPasskey(b, pg, "{}"))
		assert.Equal(t, "access_denied", q.Get("error"))
	}
}

// TestPasskeySameWorkForEveryone: the sign-in page, and a passkey that does not pass, cost the
// same store calls whoever the hint names (a user with a picture password and a passkey, one
// with a picture only, an inactive one, one with no factor, nobody), so that their time tells
// nothing either.
func TestPasskeySameWorkForEveryone(t *testing.T) {
	rec := &storeCalls{}
	e := newPasskeyEnv(t, func(c *picture.Config) {
		c.Credentials = recordedPictures{c.Credentials, rec}
		c.Passkeys = recordedPasskeys{c.Passkeys, rec}
	})
	ctx := context.Background()
	e.enrollPasskey(e.device(), "ann")
	dan, err := e.b.Users.Create(ctx, "acme", store.User{UserName: "dan", Active: true})
	require.NoError(t, err)
	require.NoError(t, e.auth.Enroll(ctx, "acme", dan.ID, "farm", newPoints))
	fred := e.device()
	e.enrollPasskey(fred, "carol")
	_, err = e.b.Users.Create(ctx, "acme", store.User{UserName: "erin", Active: true}) // no factor
	require.NoError(t, err)

	pages, posts := map[string][]string{}, map[string][]string{}
	for _, hint := range []string{"ann", "dan", "bob", "erin", "nobody"} {
		b := e.browser()
		loginURL, _ := e.login(b, hint)
		rec.take()
		pg := b.get(loginURL)
		pages[hint] = rec.take()
		cred, err := fred.Get(e.passkeyOptions(b, pg))
		require.NoError(t, err)
		rec.take()
		p := e.postPasskey(b, pg, cred)
		posts[hint] = rec.take()
		require.Equal(t, loginURL, p.location, hint)
	}
	for _, hint := range []string{"dan", "bob", "erin", "nobody"} {
		assert.Equal(t, pages["ann"], pages[hint], "the page of %s", hint)
		assert.Equal(t, posts["ann"], posts[hint], "a passkey of %s", hint)
	}
}
