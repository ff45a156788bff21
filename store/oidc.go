package store

import (
	"context"
	"time"
)

// Client is an OpenID relying party registered with one tenant: an application that sends its
// users to the second factor. Only the SHA-256 of its secret is stored.
type Client struct {
	ID          string // "client_…"; the client_id
	Tenant      string
	Name        string
	Description string
	// RedirectURIs are the registered redirect URIs, compared with a request's redirect_uri as
	// exact strings; at least one.
	RedirectURIs []string
	// SecretHash is the SHA-256 of the client secret ("secret_…").
	SecretHash    [32]byte
	Created       time.Time
	SecretRotated time.Time // when the current secret was set; Created for the first
	// RequirePAR makes the client start every sign-in with a pushed authorization request
	// (RFC 9126): the authorization endpoint refuses its plain requests.
	RequirePAR bool
	// IDTokenAlg is the JWS algorithm of the client's ID tokens, OpenID Connect Dynamic Client
	// Registration's id_token_signed_response_alg, such as "EdDSA", "RS256" or "ES256". Empty
	// means EdDSA. The store keeps it as given; the provider checks it.
	IDTokenAlg string
	// AccessToken gives the client, beside the ID token, an opaque access token that is good
	// only at the tenant's UserInfo endpoint. false: the token response holds the ID token only.
	AccessToken bool
}

// Clients stores the OpenID clients of each tenant.
//
// Every method is safe for concurrent use. A client belongs to one tenant; a client id of
// another tenant is not found. Listing order is creation order.
type Clients interface {
	// Create stores c and returns it as stored. An empty c.ID gets a new id (NewID("client")).
	// ErrNotFound if c.Tenant does not exist; ErrInvalid if c has no redirect URI; ErrConflict
	// if the id is taken in the tenant.
	Create(ctx context.Context, c Client) (*Client, error)

	// Get returns the client. ErrNotFound if the tenant or the client does not exist.
	Get(ctx context.Context, tenant, id string) (*Client, error)

	// List returns the tenant's clients in creation order. ErrNotFound if the tenant does not
	// exist.
	List(ctx context.Context, tenant string) ([]Client, error)

	// Update atomically reads the client, calls fn with a copy and stores what fn leaves (a
	// rotated secret, new redirect URIs). If fn returns an error nothing is stored and Update
	// returns it as it is. ErrNotFound if the client does not exist; ErrInvalid if fn changed
	// the id or the tenant or removed every redirect URI. fn must not call the store. It
	// returns the client as stored.
	Update(ctx context.Context, tenant, id string, fn func(*Client) error) (*Client, error)

	// Delete removes the client. ErrNotFound if it does not exist. Codes already issued to it
	// stay until they expire; the token endpoint refuses them, as it cannot authenticate the
	// client.
	Delete(ctx context.Context, tenant, id string) error
}

// Code is the grant behind an authorization code: what the code, once redeemed, proves. Only
// the code's SHA-256 is stored.
type Code struct {
	Hash        [32]byte // SHA-256 of the code
	Tenant      string
	ClientID    string
	RedirectURI string
	Challenge   string // the PKCE code_challenge (S256)
	Nonce       string
	Subject     string    // the id of the user who passed the second factor
	AuthTime    time.Time // when the user passed it
	AMR         []string  // how: authentication method references
	Expires     time.Time
}

// Codes stores authorization codes until they are redeemed or expire.
//
// Every method is safe for concurrent use.
type Codes interface {
	// Create stores c. ErrConflict if a code with c.Hash is stored, used or not; ErrInvalid if
	// c.Expires is zero.
	Create(ctx context.Context, c Code) error

	// Consume atomically marks the code whose hash is h used and returns its grant. Of any
	// number of concurrent Consumes of one code exactly one returns it with a nil error; the
	// others, and every later Consume until DeleteExpired removes the code, return the grant
	// with ErrUsed, so the caller can log the replay and whom it concerns. ErrNotFound if no
	// code has hash h. Consume does not look at Expires: the caller compares it with its clock.
	Consume(ctx context.Context, h [32]byte) (*Code, error)

	// DeleteExpired removes every code, used or not, whose Expires is before now, and returns
	// how many it removed.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}

// Interaction is an authorization request that the provider has validated and the
// authenticator is working on: the browser's way from /authorize to the redirect back.
type Interaction struct {
	// ID is 256 random bits, base64url-encoded; it names the interaction in URLs, and a cookie
	// binds it to the browser that started it.
	ID string
	// Purpose says what the interaction is for: PurposeLogin, PurposeEnrollLink or
	// PurposeEnroll.
	Purpose     string
	Tenant      string
	ClientID    string // "" for an enrollment an administrator started
	RedirectURI string
	State       string
	Nonce       string
	Challenge   string // the PKCE code_challenge (S256)
	LoginHint   string // login_hint as sent
	Subject     string // the id of the user login_hint named, or "" when it named none
	Created     time.Time
	Expires     time.Time
	// AuthState is the authenticator's own state for this interaction (a challenge it showed,
	// a CSRF token), opaque to the provider and to the store.
	AuthState []byte
	// ReplaceFactor is set on an enrollment (link) that may replace a factor the user already
	// has: one an administrator made, or one a client asked for with proof of a recent sign-in
	// with the current factor. Without it an enrollment may only set up a first factor.
	ReplaceFactor bool
}

// The purposes of an interaction.
const (
	// PurposeLogin: an authorization request whose second factor is under way.
	PurposeLogin = "login"
	// PurposeEnrollLink: a one-time enrollment link not yet opened. Its ID is the SHA-256 of the
	// link's token (base64url), so the store never holds a usable link.
	PurposeEnrollLink = "enroll-link"
	// PurposeEnroll: an opened enrollment link, bound to the browser that opened it.
	PurposeEnroll = "enroll"
)

// Interactions stores pending interactions.
//
// Every method is safe for concurrent use. Ids are unique over all tenants.
type Interactions interface {
	// Create stores i. ErrInvalid if i.ID is empty or i.Expires is zero; ErrConflict if the id
	// is taken.
	Create(ctx context.Context, i Interaction) error

	// Get returns the interaction. ErrNotFound if there is none (taken, or removed by
	// DeleteExpired). Get, Update and Take do not look at Expires: an interaction past it is
	// returned until it is taken or removed, and the caller compares Expires with its clock.
	Get(ctx context.Context, id string) (*Interaction, error)

	// Update atomically reads the interaction, calls fn with a copy and stores what fn leaves.
	// If fn returns an error nothing is stored and Update returns it as it is. ErrNotFound if
	// there is no such interaction; ErrInvalid if fn changed the id. fn must not call the store.
	// It returns the interaction as stored.
	Update(ctx context.Context, id string, fn func(*Interaction) error) (*Interaction, error)

	// Take atomically removes the interaction and returns it. Of concurrent Takes of one
	// interaction exactly one succeeds; the others get ErrNotFound. The provider takes an
	// interaction when it finishes, so one interaction yields at most one code.
	Take(ctx context.Context, id string) (*Interaction, error)

	// DeleteExpired removes every interaction whose Expires is before now, and returns how many
	// it removed.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}

// PushedRequest is an authorization request a client pushed to the provider (RFC 9126) and
// that the browser has not yet brought to the authorization endpoint. Only the SHA-256 of the
// random part of its request_uri is stored.
type PushedRequest struct {
	Hash        [32]byte // SHA-256 of the random part of the request_uri
	Tenant      string
	ClientID    string // the client that pushed it: the only one that may use it
	RedirectURI string
	State       string
	Nonce       string
	Challenge   string // the PKCE code_challenge (S256)
	LoginHint   string // login_hint as pushed
	Created     time.Time
	Expires     time.Time
}

// PushedRequests stores pushed authorization requests until they are used or expire.
//
// Every method is safe for concurrent use.
type PushedRequests interface {
	// Create stores r. ErrInvalid if r.Tenant or r.ClientID is empty, r.Hash is all zero or
	// r.Expires is zero; ErrConflict if a request with r.Hash is stored; ErrNotFound if the
	// tenant does not exist.
	Create(ctx context.Context, r PushedRequest) error

	// Consume atomically removes the request whose hash is h and returns it, if it belongs to
	// tenant and clientID and now is before its Expires. Of any number of concurrent Consumes
	// of one request exactly one returns it with a nil error. ErrNotFound otherwise: no such
	// request, already consumed, expired (it stays until DeleteExpired), or pushed by another
	// client or in another tenant, which leaves it in place for its own client.
	Consume(ctx context.Context, tenant, clientID string, h [32]byte, now time.Time) (*PushedRequest, error)

	// DeleteExpired removes every request whose Expires is before now, and returns how many it
	// removed.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}
