package oidc2fa

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/visid/visid/store"
)

// ClientSpec describes a client to register.
type ClientSpec struct {
	Tenant      string
	Name        string // shown on the login pages
	Description string
	// RedirectURIs are where the browser may be sent back, compared exactly: absolute URLs,
	// https, or http only for a loopback host (127.0.0.1, [::1], localhost), without fragment.
	RedirectURIs []string
	// RequirePAR makes the client start every sign-in with a pushed authorization request
	// (RFC 9126): the authorization endpoint refuses its plain requests. Recommended for every
	// client that can push, since nothing the browser carries can then change the request.
	RequirePAR bool
	// IDTokenAlg is the JWS algorithm of the client's ID tokens (id_token_signed_response_alg):
	// one of SigningAlgorithms. Empty: EdDSA. A client whose library verifies only RS256 asks
	// for AlgRS256.
	IDTokenAlg string
	// AccessToken gives the client, beside the ID token, an opaque access token (token_type
	// Bearer, expires_in) good only at the tenant's UserInfo endpoint, for client libraries that
	// require one. It grants no other access.
	AccessToken bool
	// Now is the registration time. Zero: time.Now().
	Now time.Time
	// Signer is the provider's Signer (Config.Signer). When it is a KeyPublisher (KeyRing is),
	// RegisterClient has it make the tenant's key of IDTokenAlg, if the tenant has none, so that
	// the tenant's JWKS lists the key before the client's first token: a relying party that
	// reads the JWKS once, before its first sign-in, never meets an unknown kid. Nil: the key is
	// made at the first token that needs it.
	Signer Signer
}

// KeyPublisher is a Signer that can make a tenant's key of an algorithm before the first token
// it signs, so that the JWKS lists the key first. The provider's client functions find it by a
// type assertion on the Signer they are given; KeyRing is one.
type KeyPublisher interface {
	// PublishKey makes sure tenant has a key of alg ("" means EdDSA) that Keys lists, making
	// one if it has none.
	PublishKey(ctx context.Context, tenant, alg string) error
}

var _ KeyPublisher = (*KeyRing)(nil)

// publishKey has signer make tenant's key of alg, if signer is a KeyPublisher.
func publishKey(ctx context.Context, signer Signer, tenant, alg string) error {
	kp, ok := signer.(KeyPublisher)
	if !ok {
		return nil
	}
	if err := kp.PublishKey(ctx, tenant, algOrDefault(alg)); err != nil {
		return fmt.Errorf("oidc2fa: making the tenant's %s signing key: %w", algOrDefault(alg), err)
	}
	return nil
}

// RegisterClient registers a client and returns its secret, which is shown this once: only its
// SHA-256 is stored. The client authenticates to the token endpoint with its id (c.ID) and this
// secret. Errors wrap store.ErrInvalid for a bad spec and store.ErrNotFound for an unknown
// tenant.
func RegisterClient(ctx context.Context, clients store.Clients, spec ClientSpec) (secret string, c *store.Client, err error) {
	if strings.TrimSpace(spec.Name) == "" {
		return "", nil, fmt.Errorf("oidc2fa: a client needs a name: %w", store.ErrInvalid)
	}
	if len(spec.RedirectURIs) == 0 {
		return "", nil, fmt.Errorf("oidc2fa: a client needs at least one redirect URI: %w", store.ErrInvalid)
	}
	for _, u := range spec.RedirectURIs {
		if err := ValidateRedirectURI(u); err != nil {
			return "", nil, err
		}
	}
	if err := validateIDTokenAlg(spec.IDTokenAlg); err != nil {
		return "", nil, err
	}
	now := spec.Now
	if now.IsZero() {
		now = time.Now()
	}
	secret, hash, err := newSecret()
	if err != nil {
		return "", nil, err
	}
	c, err = clients.Create(ctx, store.Client{
		Tenant:        spec.Tenant,
		Name:          spec.Name,
		Description:   spec.Description,
		RedirectURIs:  slices.Clone(spec.RedirectURIs),
		SecretHash:    hash,
		Created:       now,
		SecretRotated: now,
		RequirePAR:    spec.RequirePAR,
		IDTokenAlg:    normalAlg(spec.IDTokenAlg),
		AccessToken:   spec.AccessToken,
	})
	if err != nil {
		return "", nil, err
	}
	// After the Create, which refuses an unknown tenant: no key is made for a tenant that
	// does not exist. A client whose key could not be made is taken back.
	if err := publishKey(ctx, spec.Signer, spec.Tenant, spec.IDTokenAlg); err != nil {
		if derr := clients.Delete(context.WithoutCancel(ctx), spec.Tenant, c.ID); derr != nil {
			err = errors.Join(err, fmt.Errorf("oidc2fa: removing the client again: %w", derr))
		}
		return "", nil, err
	}
	return secret, c, nil
}

// RotateClientSecret gives the client a new secret, returned this once; the old one stops
// working at once.
func RotateClientSecret(ctx context.Context, clients store.Clients, tenant, id string, now time.Time) (secret string, c *store.Client, err error) {
	secret, hash, err := newSecret()
	if err != nil {
		return "", nil, err
	}
	if now.IsZero() {
		now = time.Now()
	}
	c, err = clients.Update(ctx, tenant, id, func(c *store.Client) error {
		c.SecretHash, c.SecretRotated = hash, now
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return secret, c, nil
}

// SetRedirectURIs replaces the client's redirect URIs, each checked as RegisterClient checks
// them; at least one.
func SetRedirectURIs(ctx context.Context, clients store.Clients, tenant, id string, uris []string) (*store.Client, error) {
	if len(uris) == 0 {
		return nil, fmt.Errorf("oidc2fa: a client needs at least one redirect URI: %w", store.ErrInvalid)
	}
	for _, u := range uris {
		if err := ValidateRedirectURI(u); err != nil {
			return nil, err
		}
	}
	return clients.Update(ctx, tenant, id, func(c *store.Client) error {
		c.RedirectURIs = slices.Clone(uris)
		return nil
	})
}

// SetRequirePAR sets whether the client must start every sign-in with a pushed authorization
// request.
func SetRequirePAR(ctx context.Context, clients store.Clients, tenant, id string, require bool) (*store.Client, error) {
	return clients.Update(ctx, tenant, id, func(c *store.Client) error {
		c.RequirePAR = require
		return nil
	})
}

// SetClientIDTokenAlg sets the JWS algorithm of the client's ID tokens, one of
// SigningAlgorithms; empty means EdDSA. When signer is a KeyPublisher (KeyRing is), the tenant's
// key of alg is made first, if the tenant has none, so that the JWKS lists it before the
// client's first token of alg. Tokens issued before keep verifying: the JWKS lists every
// algorithm's keys. ErrNotFound if the client does not exist (and no key is made).
func SetClientIDTokenAlg(ctx context.Context, clients store.Clients, signer Signer, tenant, id, alg string) (*store.Client, error) {
	if err := validateIDTokenAlg(alg); err != nil {
		return nil, err
	}
	if _, err := clients.Get(ctx, tenant, id); err != nil {
		return nil, err
	}
	if err := publishKey(ctx, signer, tenant, alg); err != nil {
		return nil, err
	}
	return SetIDTokenAlg(ctx, clients, tenant, id, alg)
}

// SetIDTokenAlg sets the JWS algorithm of the client's ID tokens, one of SigningAlgorithms;
// empty means EdDSA. Tokens issued before keep verifying: the JWKS lists every algorithm's keys.
// It makes no key: the tenant's key of alg is made at the first token that needs it, which a
// relying party holding an older JWKS meets as an unknown kid. SetClientIDTokenAlg makes the
// key first.
func SetIDTokenAlg(ctx context.Context, clients store.Clients, tenant, id, alg string) (*store.Client, error) {
	if err := validateIDTokenAlg(alg); err != nil {
		return nil, err
	}
	return clients.Update(ctx, tenant, id, func(c *store.Client) error {
		c.IDTokenAlg = normalAlg(alg)
		return nil
	})
}

// SetAccessToken sets whether the client gets an access token for the UserInfo endpoint beside
// its ID token.
func SetAccessToken(ctx context.Context, clients store.Clients, tenant, id string, on bool) (*store.Client, error) {
	return clients.Update(ctx, tenant, id, func(c *store.Client) error {
		c.AccessToken = on
		return nil
	})
}

// validateIDTokenAlg checks a client's ID token algorithm: empty or one of SigningAlgorithms.
// Errors wrap store.ErrInvalid.
func validateIDTokenAlg(alg string) error {
	if alg != "" && !ValidSigningAlgorithm(alg) {
		return fmt.Errorf("oidc2fa: ID token algorithm %q is not one of %s: %w", alg,
			strings.Join(SigningAlgorithms(), ", "), store.ErrInvalid)
	}
	return nil
}

// normalAlg stores the default algorithm as empty, so that a client registered before
// algorithms were chosen and one registered with EdDSA look the same.
func normalAlg(alg string) string {
	if alg == AlgEdDSA {
		return ""
	}
	return alg
}

// ListClients returns the tenant's clients in registration order.
func ListClients(ctx context.Context, clients store.Clients, tenant string) ([]store.Client, error) {
	return clients.List(ctx, tenant)
}

// DeleteClient removes a client; its codes can no longer be redeemed.
func DeleteClient(ctx context.Context, clients store.Clients, tenant, id string) error {
	return clients.Delete(ctx, tenant, id)
}

// ValidateRedirectURI checks a redirect URI for registration: absolute, https (or http for a
// loopback host), with a host, without fragment or user info. Errors wrap store.ErrInvalid.
func ValidateRedirectURI(s string) error {
	bad := func(why string) error {
		return fmt.Errorf("oidc2fa: redirect URI %q %s: %w", s, why, store.ErrInvalid)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return bad("is not a URL")
	case !u.IsAbs() || u.Host == "":
		return bad("is not absolute")
	case strings.Contains(s, "#"):
		return bad("has a fragment")
	case u.User != nil:
		return bad("carries user info")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	case u.Scheme == "http":
		return bad("uses http for a host that is not loopback; use https")
	}
	return bad("must use https")
}

// loopback reports whether host is a loopback address or localhost.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newSecret returns a client secret ("secret_" and 256 random bits) and its SHA-256.
func newSecret() (string, [32]byte, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", [32]byte{}, fmt.Errorf("oidc2fa: reading random bytes: %w", err)
	}
	s := "secret_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
	return s, sha256.Sum256([]byte(s)), nil
}
