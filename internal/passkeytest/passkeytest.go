// Package passkeytest is a software WebAuthn authenticator, with the bit of browser around it,
// for visid's tests: it answers the options a relying party hands passkey.js (the JSON of
// go-webauthn's protocol.CredentialCreation and protocol.CredentialAssertion) with what
// passkey.js posts, the JSON of a PublicKeyCredential with its binary fields in base64url.
//
// It makes ES256 (P-256) credentials, discoverable and with attestation "none", as passkey
// providers do. Its knobs make the answers a relying party must refuse: no user verification,
// backup flags, a counter that goes backwards (Credential.SetCounter, Credential.Clone), another
// origin or relying party ID (Assertion and Attestation are editable before they are signed),
// and anything else from the raw parts (Credential.Sign, EncodeAssertion).
//
//	a := passkeytest.New("https://id.example.test", "id.example.test")
//	cred, err := a.Create(optionsJSON) // the answer of POST passkey/options of an enrollment
//	...
//	assertion, err := a.Get(optionsJSON) // the answer of POST passkey/options of a sign-in
//
// It needs nothing beyond the standard library: the little CBOR it writes it encodes itself.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// The flags of authenticator data (WebAuthn §6.1).
const (
	FlagUserPresent    byte = 0x01 // UP
	FlagUserVerified   byte = 0x04 // UV
	FlagBackupEligible byte = 0x08 // BE
	FlagBackupState    byte = 0x10 // BS
	FlagAttestedData   byte = 0x40 // AT: attested credential data follows
)

// Errors of the ceremonies, where a browser or an authenticator would refuse.
var (
	// ErrOptions: the options are not JSON of the expected shape, or miss the challenge (or,
	// for Create, the user's id).
	ErrOptions = errors.New("passkeytest: the options do not parse")
	// ErrRPID: the options name a relying party ID other than the authenticator's.
	ErrRPID = errors.New("passkeytest: the options' relying party ID is not the authenticator's")
	// ErrNoAlgorithm: the options of Create do not offer ES256.
	ErrNoAlgorithm = errors.New("passkeytest: the options offer no algorithm the authenticator has (ES256)")
	// ErrExcluded: Create's options exclude a credential the authenticator holds for the
	// relying party (the browser's InvalidStateError).
	ErrExcluded = errors.New("passkeytest: the authenticator holds an excluded credential")
	// ErrNoCredential: the authenticator holds no credential the options of Get allow.
	ErrNoCredential = errors.New("passkeytest: no credential for the relying party")
)

// Authenticator is a passkey authenticator together with the browser that talks to it: it
// scopes credentials to RPID and writes Origin into the client data. Its exported fields are
// the knobs of the next ceremony; set them before a ceremony, not during one. Its methods are
// safe for concurrent use.
type Authenticator struct {
	// Origin is what the browser writes into the client data ("https://id.example.test"), and
	// RPID the relying party ID the authenticator serves ("id.example.test"): options that name
	// another are refused (ErrRPID), as a browser refuses an rpId its origin may not use.
	Origin string
	RPID   string

	// UserPresent and UserVerified are the UP and UV flags of the next Create or Get; New sets
	// both.
	UserPresent  bool
	UserVerified bool
	// BackupEligible and BackupState are the BE and BS flags of the credentials Create makes:
	// a synced passkey has both, a device-bound one neither. A credential keeps them.
	BackupEligible bool
	BackupState    bool
	// CounterStep is how much each assertion adds to its credential's signature counter
	// before signing; New sets 1. 0 keeps the counter where it is: an authenticator that keeps
	// none, when the counter is 0.
	CounterStep uint32
	// AAGUID names the authenticator's model in the attested credential data; zeros by default.
	AAGUID [16]byte
	// Attachment is the authenticatorAttachment posted ("platform" from New; "" leaves it out),
	// and Transports what the attestation response's getTransports() returns (["internal"]
	// from New).
	Attachment string
	Transports []string

	mu    sync.Mutex
	creds []*Credential
}

// New returns an authenticator at origin for rpID with no credentials, that verifies the user,
// makes device-bound credentials and counts signatures by 1.
func New(origin, rpID string) *Authenticator {
	return &Authenticator{Origin: origin, RPID: rpID, UserPresent: true, UserVerified: true, CounterStep: 1,
		Attachment: "platform", Transports: []string{"internal"}}
}

// Credential is a passkey the authenticator holds: its ID, the relying party and user it was
// made for, its backup flags, its private key and its signature counter.
type Credential struct {
	ID         []byte
	RPID       string
	UserHandle []byte
	// UserName is the user.name of the options that made it, for a test to tell credentials
	// apart.
	UserName       string
	BackupEligible bool
	BackupState    bool

	key     *ecdsa.PrivateKey
	mu      sync.Mutex
	counter uint32
}

// Counter is the credential's signature counter: what its latest signature carried.
func (c *Credential) Counter() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counter
}

// SetCounter sets the signature counter, lower than it was to play a cloned authenticator.
func (c *Credential) SetCounter(n uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counter = n
}

// next advances the counter by step and returns it.
func (c *Credential) next(step uint32) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counter += step
	return c.counter
}

// Clone is a copy of c with the same key and counter that counts on its own: the copy a cloned
// authenticator holds.
func (c *Credential) Clone() *Credential {
	d := &Credential{ID: append([]byte(nil), c.ID...), RPID: c.RPID, UserHandle: append([]byte(nil), c.UserHandle...),
		UserName: c.UserName, BackupEligible: c.BackupEligible, BackupState: c.BackupState, key: c.key}
	d.counter = c.Counter()
	return d
}

// Sign is the credential's ES256 signature (ASN.1 DER) of data.
func (c *Credential) Sign(data []byte) []byte {
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, c.key, sum[:])
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return sig
}

// PublicKey is the credential's public key in COSE (RFC 9053): an EC2 key on P-256 for ES256.
func (c *Credential) PublicKey() []byte {
	pub, err := c.key.PublicKey.ECDH()
	if err != nil {
		panic(err) // a P-256 key
	}
	raw := pub.Bytes() // 0x04 || x || y
	b := cborMap(nil, 5)
	b = cborInt(cborInt(b, 1), 2)  // kty: EC2
	b = cborInt(cborInt(b, 3), -7) // alg: ES256
	b = cborInt(cborInt(b, -1), 1) // crv: P-256
	b = cborBytes(cborInt(b, -2), raw[1:33])
	return cborBytes(cborInt(b, -3), raw[33:65])
}

// Add makes the authenticator hold c (made by another one, or a Clone).
func (a *Authenticator) Add(c *Credential) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.creds = append(a.creds, c)
}

// Credentials are the credentials the authenticator holds, oldest first.
func (a *Authenticator) Credentials() []*Credential {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*Credential(nil), a.creds...)
}

// Remove makes the authenticator forget c.
func (a *Authenticator) Remove(c *Credential) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, d := range a.creds {
		if d == c {
			a.creds = append(a.creds[:i], a.creds[i+1:]...)
			return
		}
	}
}

// ClientData is the client data a browser collects (WebAuthn §5.8.1): it is serialized as
// clientDataJSON, whose hash the authenticator signs.
type ClientData struct {
	Type        string `json:"type"`      // "webauthn.create" or "webauthn.get"
	Challenge   string `json:"challenge"` // base64url, as the options carried it
	Origin      string `json:"origin"`
	CrossOrigin bool   `json:"crossOrigin"`
}

// JSON is the clientDataJSON of d.
func (d ClientData) JSON() []byte {
	b, _ := json.Marshal(d)
	return b
}

// authData is authenticator data (WebAuthn §6.1) without attested credential data.
func authData(rpID string, flags byte, counter uint32) []byte {
	h := sha256.Sum256([]byte(rpID))
	b := append(h[:], flags)
	return binary.BigEndian.AppendUint32(b, counter)
}

// b64 is base64url without padding, as passkey.js encodes.
func b64(p []byte) string { return base64.RawURLEncoding.EncodeToString(p) }

// unb64 decodes base64url with or without padding.
func unb64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

type descriptor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// unwrap returns the publicKey member of options, or options itself when it has none.
func unwrap(options []byte) (json.RawMessage, error) {
	var outer struct {
		PublicKey json.RawMessage `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &outer); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if outer.PublicKey != nil {
		return outer.PublicKey, nil
	}
	return options, nil
}

// checkRPID returns the relying party ID of options that name rpID, or "" when they name none.
func (a *Authenticator) checkRPID(rpID string) (string, error) {
	switch rpID {
	case "", a.RPID:
		return a.RPID, nil
	}
	return "", fmt.Errorf("%w: %q, not %q", ErrRPID, rpID, a.RPID)
}

// Attestation is a registration's answer before it is encoded: a test may change any field,
// then call JSON.
type Attestation struct {
	Credential *Credential
	ClientData ClientData
	// RPID is hashed into the authenticator data; Flags and Counter are its flags (with
	// FlagAttestedData) and counter, AAGUID the model it names.
	RPID    string
	Flags   byte
	Counter uint32
	AAGUID  [16]byte
	// Format is the attestation statement's format, "none", with an empty statement.
	Format     string
	Attachment string
	Transports []string
}

// Create answers creation options (the JSON of protocol.CredentialCreation) as
// navigator.credentials.create and passkey.js would: it makes a credential for the options'
// user and returns the JSON of the PublicKeyCredential.
func (a *Authenticator) Create(options []byte) (string, error) {
	at, err := a.Attest(options)
	if err != nil {
		return "", err
	}
	return at.JSON(), nil
}

// Attest makes a credential for creation options, holds it, and returns its attestation
// before encoding.
func (a *Authenticator) Attest(options []byte) (*Attestation, error) {
	pk, err := unwrap(options)
	if err != nil {
		return nil, err
	}
	var o struct {
		RP struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"user"`
		Challenge string `json:"challenge"`
		Params    []struct {
			Type string `json:"type"`
			Alg  int    `json:"alg"`
		} `json:"pubKeyCredParams"`
		Exclude []descriptor `json:"excludeCredentials"`
	}
	if err := json.Unmarshal(pk, &o); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	user, err := unb64(o.User.ID)
	if o.Challenge == "" || err != nil || len(user) == 0 {
		return nil, fmt.Errorf("%w: no challenge or user id", ErrOptions)
	}
	rpID, err := a.checkRPID(o.RP.ID)
	if err != nil {
		return nil, err
	}
	es256 := len(o.Params) == 0 // none: the defaults, ES256 among them
	for _, p := range o.Params {
		es256 = es256 || p.Type == "public-key" && p.Alg == -7
	}
	if !es256 {
		return nil, ErrNoAlgorithm
	}
	for _, c := range a.Credentials() {
		for _, d := range o.Exclude {
			if id, err := unb64(d.ID); err == nil && c.RPID == rpID && string(id) == string(c.ID) {
				return nil, ErrExcluded
			}
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	c := &Credential{ID: id, RPID: rpID, UserHandle: user, UserName: o.User.Name,
		BackupEligible: a.BackupEligible, BackupState: a.BackupState, key: key}
	a.Add(c)
	flags := a.flags() | FlagAttestedData
	if c.BackupEligible {
		flags |= FlagBackupEligible
	}
	if c.BackupState {
		flags |= FlagBackupState
	}
	return &Attestation{
		Credential: c,
		ClientData: ClientData{Type: "webauthn.create", Challenge: o.Challenge, Origin: a.Origin},
		RPID:       rpID, Flags: flags, AAGUID: a.AAGUID, Format: "none",
		Attachment: a.Attachment, Transports: append([]string(nil), a.Transports...),
	}, nil
}

// flags are the UP and UV flags of the next ceremony.
func (a *Authenticator) flags() byte {
	var f byte
	if a.UserPresent {
		f |= FlagUserPresent
	}
	if a.UserVerified {
		f |= FlagUserVerified
	}
	return f
}

// AuthenticatorData is the attestation's authenticator data, with the attested credential
// data when Flags has FlagAttestedData.
func (at *Attestation) AuthenticatorData() []byte {
	b := authData(at.RPID, at.Flags, at.Counter)
	if at.Flags&FlagAttestedData == 0 {
		return b
	}
	b = append(b, at.AAGUID[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(at.Credential.ID)))
	b = append(b, at.Credential.ID...)
	return append(b, at.Credential.PublicKey()...)
}

// Object is the attestation object: CBOR {"fmt": Format, "attStmt": {}, "authData": …}.
func (at *Attestation) Object() []byte {
	b := cborMap(nil, 3)
	b = cborText(cborText(b, "fmt"), at.Format)
	b = cborMap(cborText(b, "attStmt"), 0)
	return cborBytes(cborText(b, "authData"), at.AuthenticatorData())
}

// JSON is the PublicKeyCredential of the attestation as passkey.js posts it.
func (at *Attestation) JSON() string {
	resp := map[string]any{
		"clientDataJSON":    b64(at.ClientData.JSON()),
		"attestationObject": b64(at.Object()),
	}
	if at.Transports != nil {
		resp["transports"] = at.Transports
	}
	return credentialJSON(at.Credential.ID, at.Attachment, resp)
}

func credentialJSON(id []byte, attachment string, resp map[string]any) string {
	out := map[string]any{
		"id": b64(id), "rawId": b64(id), "type": "public-key",
		"clientExtensionResults": map[string]any{}, "response": resp,
	}
	if attachment != "" {
		out["authenticatorAttachment"] = attachment
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// Assertion is a sign-in's answer before it is signed and encoded: a test may change any
// field, then call JSON, which signs what the fields say.
type Assertion struct {
	Credential *Credential
	ClientData ClientData
	// RPID is hashed into the authenticator data; Flags and Counter are its flags and counter.
	RPID    string
	Flags   byte
	Counter uint32
	// UserHandle is the user handle returned: the credential's.
	UserHandle []byte
	Attachment string
}

// Get answers request options (the JSON of protocol.CredentialAssertion) as
// navigator.credentials.get and passkey.js would, with the credential the person would pick:
// of those the authenticator holds for its relying party that the options allow (any, for a
// discoverable sign-in), the most recently made.
func (a *Authenticator) Get(options []byte) (string, error) {
	return a.GetWith(options, nil)
}

// GetWith is Get with credential c, chosen by the person (nil: as Get chooses). c need not be
// one the options allow or the authenticator holds.
func (a *Authenticator) GetWith(options []byte, c *Credential) (string, error) {
	as, err := a.Assert(options, c)
	if err != nil {
		return "", err
	}
	return as.JSON(), nil
}

// Assert is GetWith before signing: it advances the credential's counter by CounterStep and
// returns the assertion to sign.
func (a *Authenticator) Assert(options []byte, c *Credential) (*Assertion, error) {
	pk, err := unwrap(options)
	if err != nil {
		return nil, err
	}
	var o struct {
		Challenge string       `json:"challenge"`
		RPID      string       `json:"rpId"`
		Allow     []descriptor `json:"allowCredentials"`
	}
	if err := json.Unmarshal(pk, &o); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if o.Challenge == "" {
		return nil, fmt.Errorf("%w: no challenge", ErrOptions)
	}
	rpID, err := a.checkRPID(o.RPID)
	if err != nil {
		return nil, err
	}
	if c == nil {
		c, err = a.pick(rpID, o.Allow)
		if err != nil {
			return nil, err
		}
	}
	flags := a.flags()
	if c.BackupEligible {
		flags |= FlagBackupEligible
	}
	if c.BackupState {
		flags |= FlagBackupState
	}
	return &Assertion{
		Credential: c,
		ClientData: ClientData{Type: "webauthn.get", Challenge: o.Challenge, Origin: a.Origin},
		RPID:       rpID, Flags: flags, Counter: c.next(a.CounterStep),
		UserHandle: append([]byte(nil), c.UserHandle...), Attachment: a.Attachment,
	}, nil
}

// pick is the most recently made credential for rpID among allow (any when allow is empty).
func (a *Authenticator) pick(rpID string, allow []descriptor) (*Credential, error) {
	creds := a.Credentials()
	for i := len(creds) - 1; i >= 0; i-- {
		c := creds[i]
		if c.RPID != rpID {
			continue
		}
		ok := len(allow) == 0
		for _, d := range allow {
			id, err := unb64(d.ID)
			ok = ok || err == nil && string(id) == string(c.ID)
		}
		if ok {
			return c, nil
		}
	}
	return nil, ErrNoCredential
}

// AuthenticatorData is the assertion's authenticator data.
func (as *Assertion) AuthenticatorData() []byte { return authData(as.RPID, as.Flags, as.Counter) }

// JSON signs the assertion with its credential's key and returns the PublicKeyCredential as
// passkey.js posts it.
func (as *Assertion) JSON() string {
	data, client := as.AuthenticatorData(), as.ClientData.JSON()
	return EncodeAssertion(as.Credential.ID, client, data, SignAssertion(as.Credential, data, client), as.UserHandle, as.Attachment)
}

// SignAssertion is c's signature of an assertion: of authData followed by the SHA-256 of
// clientDataJSON (WebAuthn §6.3.3).
func SignAssertion(c *Credential, authData, clientDataJSON []byte) []byte {
	sum := sha256.Sum256(clientDataJSON)
	return c.Sign(append(append([]byte(nil), authData...), sum[:]...))
}

// EncodeAssertion is the PublicKeyCredential of an assertion from its raw parts, as passkey.js
// posts it; a nil userHandle is left out, attachment "" too.
func EncodeAssertion(id, clientDataJSON, authData, signature, userHandle []byte, attachment string) string {
	resp := map[string]any{
		"clientDataJSON":    b64(clientDataJSON),
		"authenticatorData": b64(authData),
		"signature":         b64(signature),
	}
	if userHandle != nil {
		resp["userHandle"] = b64(userHandle)
	}
	return credentialJSON(id, attachment, resp)
}
