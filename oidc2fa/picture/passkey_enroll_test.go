package picture_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/passkeytest"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// TestPasskeyEnrollRefused: an attestation that must not be stored sends the person back to the
// enrollment page, which says so, and stores nothing.
func TestPasskeyEnrollRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(t *testing.T, dev *passkeytest.Authenticator, options []byte) string
	}{{
		name: "user not verified",
		answer: func(t *testing.T, dev *passkeytest.Authenticator, options []byte) string {
			dev.UserVerified = false
			cred, err := dev.Create(options)
			require.NoError(t, err)
			return cred
		},
	}, {
		name: "another origin",
		answer: func(t *testing.T, dev *passkeytest.Authenticator, options []byte) string {
			at, err := dev.Attest(options)
			require.NoError(t, err)
			at.ClientData.Origin = "https://evil.example"
			return at.JSON()
		},
	}, {
		name: "another relying party ID",
		answer: func(t *testing.T, dev *passkeytest.Authenticator, options []byte) string {
			at, err := dev.Attest(options)
			require.NoError(t, err)
			at.RPID = "evil.example"
			return at.JSON()
		},
	}, {
		name: "malformed",
		answer: func(t *testing.T, dev *passkeytest.Authenticator, options []byte) string {
			return `{"id":"AA"}`
		},
	}, {
		name: "oversized",
		answer: func(t *testing.T, dev *passkeytest.Authenticator, options []byte) string {
			return strings.Repeat(" ", 17<<10) + "{}"
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPasskeyEnv(t)
			b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
			p := e.postPasskey(b, pg, tc.answer(t, e.device(), e.passkeyOptions(b, pg)))
			require.Equal(t, http.StatusSeeOther, p.status, p.body)
			assert.Equal(t, enrollURL, p.location)
			assert.Contains(t, b.get(enrollURL).body, "The passkey could not be added.")
			held, err := e.b.Passkeys.List(context.Background(), "acme", e.carol.ID)
			require.NoError(t, err)
			assert.Empty(t, held)
			// The enrollment goes on: a good passkey is stored.
			pg = b.get(enrollURL)
			cred, err := e.device().Create(e.passkeyOptions(b, pg))
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, e.postPasskey(b, pg, cred).status)
		})
	}
}

// TestPasskeyEnrollReplayed: an attestation posted twice stores one passkey: the first POST ended
// the enrollment; in another enrollment of the user its challenge is not the one asked for.
func TestPasskeyEnrollReplayed(t *testing.T) {
	e := newPasskeyEnv(t)
	ctx := context.Background()
	dev := e.device()
	b, _, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	cred, err := dev.Create(e.passkeyOptions(b, pg))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, e.postPasskey(b, pg, cred).status)
	again := e.postPasskey(b, pg, cred)
	assert.Equal(t, http.StatusBadRequest, again.status, "the enrollment has ended")

	b2, enrollURL2, pg2 := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	e.passkeyOptions(b2, pg2)
	p := e.postPasskey(b2, pg2, cred)
	require.Equal(t, http.StatusSeeOther, p.status)
	assert.Equal(t, enrollURL2, p.location)
	assert.Contains(t, b2.get(enrollURL2).body, "The passkey could not be added.")
	p = e.postPasskey(b2, pg2, cred)
	assert.Equal(t, http.StatusSeeOther, p.status, "without options asked for")

	held, err := e.b.Passkeys.List(ctx, "acme", e.carol.ID)
	require.NoError(t, err)
	assert.Len(t, held, 1)
	ev, err := e.b.Events.List(ctx, "acme", "", 100)
	require.NoError(t, err)
	assert.Len(t, ev, 1, "one enrollment.completed")
}

// TestPasskeyEnrollFirstFactorOnly: a client's link for a user without a factor (no proof of a
// sign-in, so no Replace) stores no passkey once the user has a factor: the enrollment is
// cancelled.
func TestPasskeyEnrollFirstFactorOnly(t *testing.T) {
	for _, name := range []string{"picture meanwhile", "passkey meanwhile"} {
		t.Run(name, func(t *testing.T) {
			e := newPasskeyEnv(t)
			ctx := context.Background()
			b, _, pg := e.openClientEnrollment("carol")
			options := e.passkeyOptions(b, pg)
			var want int
			if name == "picture meanwhile" {
				require.NoError(t, e.auth.Enroll(ctx, "acme", e.carol.ID, "farm", newPoints))
			} else {
				e.enrollPasskey(e.device(), "carol")
				want = 1
			}
			cred, err := e.device().Create(options)
			require.NoError(t, err)
			q := toClient(t, e.postPasskey(b, pg, cred))
			assert.Equal(t, "access_denied", q.Get("error"))
			held, err := e.b.Passkeys.List(ctx, "acme", e.carol.ID)
			require.NoError(t, err)
			assert.Len(t, held, want, "no passkey added")
			assert.Contains(t, e.log.String(), "the user has a factor and this enrollment may not add one")
			status, body := e.enrollByClient("carol")
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "login_required", body["error"], "carol has a factor now")
		})
	}
}

// TestPasskeyEnrollPolicyTurnedOff: a passkey whose challenge was asked for while the tenant
// allowed passkeys is not stored once it no longer does.
func TestPasskeyEnrollPolicyTurnedOff(t *testing.T) {
	e := newPasskeyEnv(t)
	ctx := context.Background()
	b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	cred, err := e.device().Create(e.passkeyOptions(b, pg))
	require.NoError(t, err)
	_, err = e.b.Tenants.Update(ctx, "acme", func(t *store.Tenant) error { t.SecondFactor = store.SecondFactorPicture; return nil })
	require.NoError(t, err)
	p := e.postPasskey(b, pg, cred)
	require.Equal(t, http.StatusSeeOther, p.status, p.body)
	assert.Equal(t, enrollURL, p.location)
	held, err := e.b.Passkeys.List(ctx, "acme", e.carol.ID)
	require.NoError(t, err)
	assert.Empty(t, held)
	assert.Contains(t, e.log.String(), "passkeys are off for the tenant")
}
