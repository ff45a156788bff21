package passkeytest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/passkeytest"
)

const (
	origin = "https://id.example.test"
	rpID   = "id.example.test"
)

// user is a go-webauthn user with the credentials it registered.
type user struct {
	id    []byte
	creds []webauthn.Credential
}

func (u *user) WebAuthnID() []byte                         { return u.id }
func (u *user) WebAuthnName() string                       { return "ann" }
func (u *user) WebAuthnDisplayName() string                { return "Ann" }
func (u *user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// relyingParty is go-webauthn as oidc2fa/picture configures it: discoverable credentials, user
// verification required, no attestation.
func relyingParty(t *testing.T) *webauthn.WebAuthn {
	t.Helper()
	w, err := webauthn.New(&webauthn.Config{
		RPID: rpID, RPDisplayName: "visid", RPOrigins: []string{origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:        protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification:   protocol.VerificationRequired,
		},
		AttestationPreference: protocol.PreferNoAttestation,
	})
	require.NoError(t, err)
	return w
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// register runs a registration of u through go-webauthn with a and returns the credential the
// relying party stored, or the error of CreateCredential.
func register(t *testing.T, w *webauthn.WebAuthn, a *passkeytest.Authenticator, u *user) (*webauthn.Credential, error) {
	t.Helper()
	var exclude []protocol.CredentialDescriptor
	for _, c := range u.creds {
		exclude = append(exclude, c.Descriptor())
	}
	options, session, err := w.BeginRegistration(u, webauthn.WithExclusions(exclude))
	require.NoError(t, err)
	answer, err := a.Create(marshal(t, options))
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes([]byte(answer))
	require.NoError(t, err)
	cred, err := w.CreateCredential(u, *session, parsed)
	if err == nil {
		u.creds = append(u.creds, *cred)
	}
	return cred, err
}

// login runs a discoverable login through go-webauthn, answering with answer(options), and
// returns the credential as the relying party updated it.
func login(t *testing.T, w *webauthn.WebAuthn, u *user, answer func(options []byte) (string, error)) (*webauthn.Credential, error) {
	t.Helper()
	options, session, err := w.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	require.NoError(t, err)
	body, err := answer(marshal(t, options))
	require.NoError(t, err)
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(body))
	if err != nil {
		return nil, err
	}
	_, cred, err := w.ValidatePasskeyLogin(func(rawID, userHandle []byte) (webauthn.User, error) {
		if !bytes.Equal(userHandle, u.id) {
			return nil, errors.New("unknown user handle")
		}
		return u, nil
	}, *session, parsed)
	if err == nil {
		for i := range u.creds {
			if bytes.Equal(u.creds[i].ID, cred.ID) {
				u.creds[i] = *cred
			}
		}
	}
	return cred, err
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name              string
		backup            bool
		wantBE, wantBS    bool
		counter, counter2 uint32
	}{
		{name: "device-bound", counter: 1, counter2: 2},
		{name: "synced", backup: true, wantBE: true, wantBS: true, counter: 1, counter2: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, a := relyingParty(t), passkeytest.New(origin, rpID)
			a.BackupEligible, a.BackupState = tc.backup, tc.backup
			u := &user{id: []byte("user_01")}
			cred, err := register(t, w, a, u)
			require.NoError(t, err)
			require.Len(t, a.Credentials(), 1)
			held := a.Credentials()[0]
			assert.Equal(t, held.ID, cred.ID)
			assert.Equal(t, "ann", held.UserName)
			assert.Equal(t, []byte("user_01"), held.UserHandle)
			assert.True(t, cred.Flags.UserPresent)
			assert.True(t, cred.Flags.UserVerified)
			assert.Equal(t, tc.wantBE, cred.Flags.BackupEligible)
			assert.Equal(t, tc.wantBS, cred.Flags.BackupState)
			assert.Equal(t, "none", cred.AttestationFormat)
			assert.Equal(t, []protocol.AuthenticatorTransport{"internal"}, cred.Transport)
			assert.Equal(t, uint32(0), cred.Authenticator.SignCount)

			used, err := login(t, w, u, a.Get)
			require.NoError(t, err)
			assert.False(t, used.Authenticator.CloneWarning)
			assert.Equal(t, tc.counter, used.Authenticator.SignCount)
			used, err = login(t, w, u, a.Get)
			require.NoError(t, err)
			assert.Equal(t, tc.counter2, used.Authenticator.SignCount)
			assert.Equal(t, tc.counter2, held.Counter())
		})
	}
}

// TestPublicKey: the COSE key decodes as the EC2 P-256 ES256 key go-webauthn expects, in the
// canonical CBOR of CTAP2.
func TestPublicKey(t *testing.T) {
	w, a := relyingParty(t), passkeytest.New(origin, rpID)
	cred, err := register(t, w, a, &user{id: []byte("user_01")})
	require.NoError(t, err)
	var key map[int]any
	require.NoError(t, webauthncbor.Unmarshal(cred.PublicKey, &key))
	assert.EqualValues(t, 2, key[1])
	assert.EqualValues(t, -7, key[3])
	assert.EqualValues(t, 1, key[-1])
	assert.Len(t, key[-2], 32)
	assert.Len(t, key[-3], 32)
	assert.Equal(t, a.Credentials()[0].PublicKey(), cred.PublicKey)
	assert.Equal(t, byte(0xa5), cred.PublicKey[0], "a map of five pairs")
}

// reason is err with go-webauthn's details.
func reason(err error) string {
	var perr *protocol.Error
	if errors.As(err, &perr) {
		return perr.Error() + ": " + perr.DevInfo
	}
	return fmt.Sprint(err)
}

// TestRefused: what go-webauthn must refuse, the knobs make.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		want   string // in go-webauthn's reason
		answer func(t *testing.T, a *passkeytest.Authenticator, options []byte) (string, error)
		check  func(t *testing.T, cred *webauthn.Credential, err error)
	}{{
		name: "user not verified", want: "User verification required",
		answer: func(t *testing.T, a *passkeytest.Authenticator, options []byte) (string, error) {
			a.UserVerified = false
			return a.Get(options)
		},
	}, {
		name: "another origin", want: "Error validating origin",
		answer: func(t *testing.T, a *passkeytest.Authenticator, options []byte) (string, error) {
			as, err := a.Assert(options, nil)
			require.NoError(t, err)
			as.ClientData.Origin = "https://evil.test"
			return as.JSON(), nil
		},
	}, {
		name: "another relying party ID", want: "RP Hash mismatch",
		answer: func(t *testing.T, a *passkeytest.Authenticator, options []byte) (string, error) {
			as, err := a.Assert(options, nil)
			require.NoError(t, err)
			as.RPID = "evil.test"
			return as.JSON(), nil
		},
	}, {
		name: "another challenge", want: "Error validating challenge",
		answer: func(t *testing.T, a *passkeytest.Authenticator, options []byte) (string, error) {
			as, err := a.Assert(options, nil)
			require.NoError(t, err)
			as.ClientData.Challenge = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
			return as.JSON(), nil
		},
	}, {
		name: "a registration's client data", want: "Error validating ceremony type",
		answer: func(t *testing.T, a *passkeytest.Authenticator, options []byte) (string, error) {
			as, err := a.Assert(options, nil)
			require.NoError(t, err)
			as.ClientData.Type = "webauthn.create"
			return as.JSON(), nil
		},
	}, {
		name: "a signature of other data", want: "assertion signature",
		answer: func(t *testing.T, a *passkeytest.Authenticator, options []byte) (string, error) {
			as, err := a.Assert(options, nil)
			require.NoError(t, err)
			c := as.Credential
			return passkeytest.EncodeAssertion(c.ID, as.ClientData.JSON(), as.AuthenticatorData(),
				c.Sign([]byte("something else")), c.UserHandle, ""), nil
		},
	}, {
		name: "backup eligibility changed", want: "Backup Eligible flag inconsistency",
		answer: func(t *testing.T, a *passkeytest.Authenticator, options []byte) (string, error) {
			as, err := a.Assert(options, nil)
			require.NoError(t, err)
			as.Flags |= passkeytest.FlagBackupEligible
			return as.JSON(), nil
		},
	}, {
		name: "counter backwards (a clone)",
		answer: func(t *testing.T, a *passkeytest.Authenticator, options []byte) (string, error) {
			a.Credentials()[0].SetCounter(0) // after the first login at 1: the next signs 1 again
			return a.Get(options)
		},
		check: func(t *testing.T, cred *webauthn.Credential, err error) {
			// go-webauthn accepts it and warns; the relying party must refuse it.
			require.NoError(t, err)
			assert.True(t, cred.Authenticator.CloneWarning)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			w, a := relyingParty(t), passkeytest.New(origin, rpID)
			u := &user{id: []byte("user_01")}
			_, err := register(t, w, a, u)
			require.NoError(t, err)
			_, err = login(t, w, u, a.Get)
			require.NoError(t, err)
			cred, err := login(t, w, u, func(options []byte) (string, error) { return tc.answer(t, a, options) })
			if tc.check != nil {
				tc.check(t, cred, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, reason(err), tc.want)
		})
	}
}

// TestRegistrationRefused: a registration without user verification, or of an origin the
// relying party does not serve, is refused by go-webauthn.
func TestRegistrationRefused(t *testing.T) {
	w := relyingParty(t)
	a := passkeytest.New(origin, rpID)
	a.UserVerified = false
	_, err := register(t, w, a, &user{id: []byte("user_01")})
	assert.Contains(t, reason(err), "User verification required")

	a = passkeytest.New("https://evil.test", rpID)
	_, err = register(t, w, a, &user{id: []byte("user_01")})
	assert.Contains(t, reason(err), "Error validating origin")
}

// TestAuthenticatorRefuses: what a browser or an authenticator would refuse, passkeytest does.
func TestAuthenticatorRefuses(t *testing.T) {
	w := relyingParty(t)
	a := passkeytest.New(origin, rpID)
	u := &user{id: []byte("user_01")}
	_, err := register(t, w, a, u)
	require.NoError(t, err)
	_, err = register(t, w, a, u)
	assert.ErrorIs(t, err, passkeytest.ErrExcluded, "the user's passkey is excluded")

	other := passkeytest.New("https://other.test", "other.test")
	options, _, err := w.BeginDiscoverableLogin()
	require.NoError(t, err)
	_, err = other.Get(marshal(t, options))
	assert.ErrorIs(t, err, passkeytest.ErrRPID)
	other.RPID = rpID
	_, err = other.Get(marshal(t, options))
	assert.ErrorIs(t, err, passkeytest.ErrNoCredential)

	_, err = a.Get([]byte(`{"publicKey":{}}`))
	assert.ErrorIs(t, err, passkeytest.ErrOptions)
	_, err = a.Create([]byte(`not json`))
	assert.ErrorIs(t, err, passkeytest.ErrOptions)
	_, err = a.Create([]byte(`{"publicKey":{"challenge":"AAAA","user":{"id":"AQ"},"pubKeyCredParams":[{"type":"public-key","alg":-257}]}}`))
	assert.ErrorIs(t, err, passkeytest.ErrNoAlgorithm)
}

// TestChoosing: Get picks the newest credential the options allow; GetWith the one given; a
// Clone counts on its own.
func TestChoosing(t *testing.T) {
	w := relyingParty(t)
	a := passkeytest.New(origin, rpID)
	ann, bob := &user{id: []byte("user_ann")}, &user{id: []byte("user_bob")}
	_, err := register(t, w, a, ann)
	require.NoError(t, err)
	_, err = register(t, w, a, bob)
	require.NoError(t, err)
	creds := a.Credentials()
	require.Len(t, creds, 2)

	options, _, err := w.BeginDiscoverableLogin()
	require.NoError(t, err)
	got, err := a.Get(marshal(t, options))
	require.NoError(t, err)
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(got))
	require.NoError(t, err)
	assert.Equal(t, []byte("user_bob"), []byte(parsed.Response.UserHandle), "the newest")

	got, err = a.GetWith(marshal(t, options), creds[0])
	require.NoError(t, err)
	parsed, err = protocol.ParseCredentialRequestResponseBytes([]byte(got))
	require.NoError(t, err)
	assert.Equal(t, []byte("user_ann"), []byte(parsed.Response.UserHandle))

	options, _, err = w.BeginLogin(ann)
	require.NoError(t, err)
	got, err = a.Get(marshal(t, options))
	require.NoError(t, err)
	parsed, err = protocol.ParseCredentialRequestResponseBytes([]byte(got))
	require.NoError(t, err)
	assert.Equal(t, creds[0].ID, []byte(parsed.RawID), "the one the options allow")

	clone := creds[0].Clone()
	before := creds[0].Counter()
	_, err = a.GetWith(marshal(t, options), creds[0])
	require.NoError(t, err)
	assert.Equal(t, before+1, creds[0].Counter())
	assert.Equal(t, before, clone.Counter())
	a.Remove(creds[1])
	assert.Len(t, a.Credentials(), 1)
}
