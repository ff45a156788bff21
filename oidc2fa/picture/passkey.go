package picture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// The amr of a passkey (RFC 8176): proof of possession of a key held in hardware ("hwk") when
// the passkey cannot leave its authenticator, or of a key that may be synced and so is held in
// software ("swk") when it may be backed up; with user verification, required of every
// passkey, it is multiple-factor ("mfa") on its own.
var (
	hardwareKeyMethods = []string{"hwk", "mfa"}
	softwareKeyMethods = []string{"swk", "mfa"}
)

// passkeyMethods is the amr of a sign-in with p.
func passkeyMethods(p *store.Passkey) []string {
	if p.BackupEligible {
		return softwareKeyMethods
	}
	return hardwareKeyMethods
}

// maxCredentialJSON bounds the credential a browser posts: an assertion or an attestation
// without attestation statement is well under 4 KiB.
const maxCredentialJSON = 16 << 10

// Errors of the passkey ceremonies; each is a reason in the log, never shown apart.
var (
	errNoChallenge   = errors.New("no passkey challenge is pending (replayed or never begun)")
	errOtherUser     = errors.New("the passkey belongs to another user")
	errUnknownKey    = errors.New("no user of the tenant holds the passkey")
	errCounter       = errors.New("the passkey's signature counter did not move forward (a cloned authenticator?)")
	errNotVerified   = errors.New("the authenticator did not verify the user")
	errNoPasskeyHere = errors.New("passkeys need a provider whose BaseURL names a domain, not an address")
)

// relyingParty is the WebAuthn relying party of an origin: its ID is the origin's host.
type relyingParty struct {
	mu  sync.Mutex
	all map[string]*webauthn.WebAuthn // by origin
}

// of returns the relying party of origin, made at its first use. An origin whose host is an
// IP address has none: WebAuthn relying party IDs are domains.
func (rp *relyingParty) of(origin string) (*webauthn.WebAuthn, error) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if w := rp.all[origin]; w != nil {
		return w, nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("picture: origin %q: %w", origin, errNoPasskeyHere)
	}
	if net.ParseIP(u.Hostname()) != nil || strings.IndexFunc(u.Hostname(), func(r rune) bool { return r >= 0x80 }) >= 0 {
		// An IP address is no relying party ID; a host not in ASCII would have to be given
		// in its punycode form (xn--…), as browsers serialize it.
		return nil, errNoPasskeyHere
	}
	w, err := webauthn.New(&webauthn.Config{
		RPID:          strings.ToLower(u.Hostname()), // a host is case-insensitive; an RP ID is lower case
		RPDisplayName: "visid",
		RPOrigins:     []string{strings.ToLower(origin)}, // as browsers serialize an origin
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:        protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification:   protocol.VerificationRequired,
		},
		AttestationPreference: protocol.PreferNoAttestation,
	})
	if err != nil {
		return nil, fmt.Errorf("picture: passkeys for %s: %w", origin, err)
	}
	if rp.all == nil {
		rp.all = map[string]*webauthn.WebAuthn{}
	}
	rp.all[origin] = w
	return w, nil
}

// passkeyUser is a user as go-webauthn sees it. Its handle is the user's id: opaque, random and
// the same in every tenant's store, never a name.
type passkeyUser struct {
	id, name, display string
	creds             []webauthn.Credential
}

func (u *passkeyUser) WebAuthnID() []byte                         { return []byte(u.id) }
func (u *passkeyUser) WebAuthnName() string                       { return u.name }
func (u *passkeyUser) WebAuthnDisplayName() string                { return u.display }
func (u *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// userOf is u with passkeys ps.
func userOf(u *store.User, ps []store.Passkey) *passkeyUser {
	pu := &passkeyUser{id: u.ID, name: u.UserName, display: u.DisplayName}
	if pu.display == "" {
		pu.display = u.UserName
	}
	for i := range ps {
		pu.creds = append(pu.creds, credentialOf(&ps[i]))
	}
	return pu
}

// credentialOf is p as go-webauthn's credential record.
func credentialOf(p *store.Passkey) webauthn.Credential {
	c := webauthn.Credential{
		ID:              p.ID,
		PublicKey:       p.PublicKey,
		AttestationType: p.AttestationType,
		Flags: webauthn.CredentialFlags{UserPresent: true, UserVerified: true,
			BackupEligible: p.BackupEligible, BackupState: p.BackupState},
		Authenticator: webauthn.Authenticator{AAGUID: p.AAGUID, SignCount: p.SignCount},
	}
	for _, t := range p.Transports {
		c.Transport = append(c.Transport, protocol.AuthenticatorTransport(t))
	}
	return c
}

// passkeysOffered reports whether the pages of a tenant whose policy is allowed offer passkeys
// at origin: the authenticator has a passkey store and the origin can be a relying party.
func (a *Authenticator) passkeysOffered(allowed bool, origin string) bool {
	if a.passkeys == nil || !allowed {
		return false
	}
	_, err := a.rp.of(origin)
	return err == nil
}

// session is the one pending WebAuthn ceremony of a sign-in or enrollment, kept in its state
// until a request takes it: each challenge is answered at most once.
type session struct {
	Data *webauthn.SessionData `json:"d"`
}

// writeOptions answers a ceremony's options as JSON, for passkey.js to hand the browser.
func writeOptions(w http.ResponseWriter, options any) {
	body, err := json.Marshal(options)
	if err != nil {
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	}
	pageHeaders(w.Header())
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// credentialField reads the credential passkey.js posted in the form field "credential".
func credentialField(r *http.Request) []byte {
	return []byte(r.PostFormValue("credential"))
}

// beginPasskeyLogin answers POST passkey/options of a sign-in: the options of a discoverable
// assertion (no credential is named, so the page says nothing about which passkeys the user
// holds) with a fresh challenge, kept in the sign-in's state in place of any earlier one.
func (a *Authenticator) beginPasskeyLogin(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login) {
	ctx := r.Context()
	wa, err := a.rp.of(l.Origin)
	if err != nil || !a.passkeysOffered(l.Passkeys, l.Origin) {
		http.NotFound(w, r)
		return
	}
	options, data, err := wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		a.internal(w, r, err)
		return
	}
	err = l.UpdateState(ctx, func(old []byte) ([]byte, error) {
		var st loginState
		if len(old) > 0 {
			_ = json.Unmarshal(old, &st)
		}
		st.Passkey = &session{Data: data}
		return json.Marshal(st)
	})
	if err != nil {
		a.internal(w, r, err)
		return
	}
	writeOptions(w, options)
}

// takeLoginSession takes the pending passkey challenge of a sign-in and counts the attempt,
// atomically: of several requests that answer one challenge, one gets it. It returns the state
// as stored and the session, nil when there was none.
func takeLoginSession(ctx context.Context, l *oidc2fa.Login) (loginState, *webauthn.SessionData, error) {
	var st loginState
	var data *webauthn.SessionData
	err := l.UpdateState(ctx, func(old []byte) ([]byte, error) {
		st, data = loginState{}, nil
		if len(old) > 0 {
			_ = json.Unmarshal(old, &st)
		}
		if st.Passkey != nil {
			data = st.Passkey.Data
		}
		st.Passkey = nil
		st.Attempts++
		return json.Marshal(st)
	})
	return st, data, err
}

// passkeyAttempt checks the assertion of POST passkey. It shares the picture's lock: for a user
// with a picture password, the attempt is counted as a failure before it is checked, a lock in
// force refuses it like a wrong picture, and a success resets the counts and makes the network
// familiar, exactly as a picture's does. Every failure looks the same to the person.
func (a *Authenticator) passkeyAttempt(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login, ch *challenge) {
	ctx := r.Context()
	st, data, err := takeLoginSession(ctx, l)
	if err != nil {
		a.ended(w, r, l, err)
		return
	}
	now := a.now()
	reason := ""
	switch {
	case l.AmbiguousHint:
		reason = "ambiguous hint"
	case l.User == nil:
		reason = "unknown user"
	case !l.User.Active:
		reason = "inactive user"
	case !a.passkeysOffered(l.Passkeys, l.Origin):
		reason = "passkeys are off for the tenant"
	case data == nil:
		reason = errNoChallenge.Error()
	}
	// Every attempt costs the same store calls and checks whoever the hint names, as a picture's
	// does: the lock's (the failure is counted first), and the assertion's when there is one.
	g, lerr := a.enter(ctx, l, ch, now)
	switch {
	case ch.cred == nil:
		// Nothing to lock: the user has no picture password, or the hint names nobody.
	case errors.Is(lerr, store.ErrNotFound):
		ch.cred = nil // the picture password went since the page was shown
	case lerr != nil:
		a.internal(w, r, lerr)
		return
	case reason == "" && g.refused:
		reason = "locked"
	}
	var used *usedPasskey
	if data != nil && a.passkeysOffered(l.Passkeys, l.Origin) {
		u, err := a.verifyAssertion(ctx, l, data, credentialField(r))
		switch {
		case errors.Is(err, store.ErrUnavailable):
			a.internal(w, r, err)
			return
		case reason != "":
		case err != nil:
			reason = err.Error()
		default:
			used = u
		}
	}
	if reason == "" {
		err := a.passkeys.Use(ctx, l.Tenant, l.Subject, used.ID, store.PasskeyUse{
			SignCount: used.SignCount, BackupState: used.BackupState, At: now, OldSignCount: used.old})
		switch {
		case errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound):
			reason = "the passkey was used or removed meanwhile"
		case err != nil:
			a.internal(w, r, err)
			return
		}
	}
	if reason == "" {
		if ch.cred != nil {
			err := a.creds.Succeeded(ctx, l.Tenant, l.Subject, store.PictureSuccess{Network: g.network, At: now,
				KeepFamiliar: a.famKeep, KeepUserCount: g.userLockedAtRead})
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				a.internal(w, r, err)
				return
			}
		}
		a.tel.count(ctx, a.tel.attempts, "succeeded", l.Tenant)
		a.log.InfoContext(ctx, "passkey login passed", "tenant", l.Tenant, "subject", l.Subject, "client", l.Client.ID,
			"backup_eligible", used.BackupEligible)
		l.Succeed(w, r, oidc2fa.Success{Subject: l.Subject, AuthTime: now, Methods: passkeyMethods(&used.Passkey)})
		return
	}
	a.failAttempt(w, r, l, ch, st, g, "passkey", reason)
}

// usedPasskey is a passkey as a verified assertion left it, with the counter read before.
type usedPasskey struct {
	store.Passkey
	old uint32
}

// verifyAssertion checks an assertion against the challenge data: the passkey must be one the
// sign-in's user holds, the signature good over this challenge, at the provider's origin and
// relying party ID, with the user verified, the backup flags consistent and the counter moved
// forward (or kept at 0 by an authenticator that keeps none).
func (a *Authenticator) verifyAssertion(ctx context.Context, l *oidc2fa.Login, data *webauthn.SessionData, body []byte) (*usedPasskey, error) {
	wa, err := a.rp.of(l.Origin)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 || len(body) > maxCredentialJSON {
		return nil, errors.New("the credential is missing or too large")
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(body)
	if err != nil {
		return nil, fmt.Errorf("the assertion does not parse: %w", err)
	}
	var held *store.Passkey
	var lookupErr error
	handler := func(rawID, userHandle []byte) (webauthn.User, error) {
		p, err := a.passkeys.Get(ctx, l.Tenant, rawID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			lookupErr = errUnknownKey
			return nil, lookupErr
		case err != nil:
			lookupErr = err
			return nil, err
		case l.User == nil || p.UserID != l.Subject || !bytes.Equal(userHandle, []byte(p.UserID)):
			lookupErr = errOtherUser
			return nil, lookupErr
		}
		held = p
		return userOf(l.User, []store.Passkey{*p}), nil
	}
	_, cred, err := wa.ValidatePasskeyLogin(handler, *data, parsed)
	switch {
	case lookupErr != nil:
		return nil, lookupErr
	case err != nil:
		return nil, fmt.Errorf("the assertion is not valid: %w", err)
	case !parsed.Response.AuthenticatorData.Flags.HasUserVerified():
		return nil, errNotVerified
	case cred.Authenticator.CloneWarning:
		return nil, errCounter
	}
	u := &usedPasskey{Passkey: *held, old: held.SignCount}
	u.SignCount, u.BackupState = cred.Authenticator.SignCount, cred.Flags.BackupState
	return u, nil
}

// beginPasskeyEnroll answers POST passkey/options of an enrollment: the options to create a
// passkey for the user (a discoverable credential, user verification required, no attestation,
// the passkeys the user holds excluded) with a fresh challenge, kept in the enrollment's state.
func (a *Authenticator) beginPasskeyEnroll(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment) {
	ctx := r.Context()
	wa, err := a.rp.of(e.Origin)
	if err != nil || !a.passkeysOffered(e.Passkeys, e.Origin) {
		http.NotFound(w, r)
		return
	}
	held, err := a.passkeys.List(ctx, e.Tenant, e.Subject)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	user := userOf(e.User, held)
	var exclude []protocol.CredentialDescriptor
	for _, c := range user.creds {
		exclude = append(exclude, c.Descriptor())
	}
	rpName := e.Look.Name
	if rpName == "" {
		rpName = e.Tenant
	}
	options, data, err := wa.BeginRegistration(user,
		webauthn.WithExclusions(exclude),
		webauthn.WithConveyancePreference(protocol.PreferNoAttestation),
		webauthn.WithRegistrationRelyingPartyName(rpName))
	if err != nil {
		a.internal(w, r, err)
		return
	}
	err = setState(ctx, e, func(st *enrollState) error {
		st.Passkey = &session{Data: data}
		return nil
	})
	if err != nil {
		a.internal(w, r, err)
		return
	}
	writeOptions(w, options)
}

// savePasskey checks the attestation of POST passkey of an enrollment and stores the passkey.
// The challenge is taken by one request; as with a picture, an enrollment that may not replace
// the factor stores a passkey only for a user who has none yet, and the request that stores it
// ends the enrollment.
func (a *Authenticator) savePasskey(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment) {
	ctx := r.Context()
	var data *webauthn.SessionData
	err := setState(ctx, e, func(st *enrollState) error {
		if st.Storing {
			return errStoring
		}
		data = nil
		if st.Passkey != nil {
			data = st.Passkey.Data
		}
		st.Passkey, st.Storing = nil, data != nil
		return nil
	})
	switch {
	case errors.Is(err, errStoring) || errors.Is(err, store.ErrNotFound):
		a.enrollmentBusy(w, r, e)
		return
	case err != nil:
		a.internal(w, r, err)
		return
	case data == nil:
		a.refuseEnroll(w, r, e, "passkey.error.failed", errNoChallenge.Error())
		return
	case !a.passkeysOffered(e.Passkeys, e.Origin):
		// The tenant allowed passkeys when the challenge was asked for, and no longer does.
		a.unclaim(ctx, e)
		a.refuseEnroll(w, r, e, "passkey.error.failed", "passkeys are off for the tenant")
		return
	}
	p, err := a.verifyAttestation(ctx, e, data, credentialField(r))
	switch {
	case errors.Is(err, store.ErrUnavailable):
		a.unclaim(ctx, e)
		a.internal(w, r, err)
		return
	case err != nil:
		a.unclaim(ctx, e)
		a.refuseEnroll(w, r, e, "passkey.error.failed", err.Error())
		return
	}
	had, err := a.HasFactor(ctx, e.Tenant, e.Subject)
	if err != nil {
		a.unclaim(ctx, e)
		a.internal(w, r, err)
		return
	}
	if had && !e.Replace {
		a.log.WarnContext(ctx, "passkey enrollment refused: the user has a factor and this enrollment may not add one",
			"tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID)
		e.Cancel(w, r)
		return
	}
	err = a.passkeys.Create(ctx, *p)
	switch {
	case errors.Is(err, store.ErrConflict):
		a.unclaim(ctx, e)
		a.refuseEnroll(w, r, e, "passkey.error.failed", "the passkey is registered already, or the user holds the most passkeys allowed")
		return
	case err != nil:
		a.unclaim(ctx, e)
		a.internal(w, r, err)
		return
	case had:
		a.log.WarnContext(ctx, "passkey added to a user who had a factor", "tenant", e.Tenant, "subject", e.Subject,
			"client", e.Client.ID, "backup_eligible", p.BackupEligible)
	default:
		a.log.InfoContext(ctx, "passkey enrolled", "tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID,
			"backup_eligible", p.BackupEligible)
	}
	if e.Done(w, r) {
		return
	}
	t := a.texts.Match(e.Languages...)
	a.render(w, r, http.StatusOK, "done", (&pageData{T: t, Title: t.Text("passkey.done.title"),
		Message: t.Text("passkey.done.message"), InlineStyle: inlineStyle}).withTenant(e.Look))
}

// verifyAttestation checks the browser's answer to a registration challenge: the challenge,
// origin and relying party ID, user presence and verification, a credential ID and key
// go-webauthn accepts. It returns the passkey to store.
func (a *Authenticator) verifyAttestation(ctx context.Context, e *oidc2fa.Enrollment, data *webauthn.SessionData, body []byte) (*store.Passkey, error) {
	wa, err := a.rp.of(e.Origin)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 || len(body) > maxCredentialJSON {
		return nil, errors.New("the credential is missing or too large")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(body)
	if err != nil {
		return nil, fmt.Errorf("the attestation does not parse: %w", err)
	}
	held, err := a.passkeys.List(ctx, e.Tenant, e.Subject)
	if err != nil {
		return nil, err
	}
	cred, err := wa.CreateCredential(userOf(e.User, held), *data, parsed)
	switch {
	case err != nil:
		return nil, fmt.Errorf("the attestation is not valid: %w", err)
	case !cred.Flags.UserVerified:
		return nil, errNotVerified
	case len(cred.ID) == 0 || len(cred.ID) > 1023:
		return nil, errors.New("the credential ID is empty or too long")
	}
	now := a.now()
	p := &store.Passkey{
		Tenant: e.Tenant, UserID: e.Subject, ID: cred.ID,
		Name:            "Passkey " + now.UTC().Format("2006-01-02 15:04") + " UTC",
		PublicKey:       cred.PublicKey,
		AttestationType: cred.AttestationType,
		AAGUID:          cred.Authenticator.AAGUID,
		SignCount:       cred.Authenticator.SignCount,
		BackupEligible:  cred.Flags.BackupEligible,
		BackupState:     cred.Flags.BackupState,
		Created:         now,
	}
	if p.AttestationType == "" {
		p.AttestationType = "none"
	}
	for _, t := range cred.Transport {
		p.Transports = append(p.Transports, string(t))
	}
	return p, nil
}
