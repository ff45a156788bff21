package rp

import (
	"errors"
	"net/url"
	"time"
)

// The reasons Callback refuses a callback, matchable with errors.Is. The error Callback returns
// wraps one of them (or is an *AuthError), together with the cause; an error matching none of
// them is a failure to reach the provider or the Sessions, or a provider answer that makes no
// sense (a 502 rather than a 4xx for the host).
var (
	// ErrState: the callback's state is missing, unknown, expired, already used, or was saved
	// for another browser. The browser should start the second factor again.
	ErrState = errors.New("rp: invalid state: the sign-in is unknown, expired or already finished")
	// ErrIssuer: the callback's iss parameter (RFC 9207) or the ID token's iss claim is missing
	// or is not the configured issuer.
	ErrIssuer = errors.New("rp: wrong issuer")
	// ErrExpired: the ID token has expired (beyond Config.Leeway); the flow must be repeated.
	ErrExpired = errors.New("rp: the ID token has expired; the flow must be repeated")
	// ErrNonce: the ID token's nonce is missing or is not the one sent with this sign-in.
	ErrNonce = errors.New("rp: the ID token's nonce does not match the sign-in")
	// ErrSignature: the ID token is not signed with EdDSA by a key of the provider's JWKS
	// (another algorithm such as none, HS256 or RS256; an unknown kid; a bad signature).
	ErrSignature = errors.New("rp: the ID token's signature is not valid")
	// ErrAudience: the ID token's aud is not exactly this client, or its azp names another
	// client.
	ErrAudience = errors.New("rp: the ID token is meant for another client")
	// ErrInvalidToken: the ID token is malformed, or a claim other than those above is wrong:
	// no sub, no exp, iat or nbf in the future (beyond Config.Leeway), an unexpected typ.
	ErrInvalidToken = errors.New("rp: the ID token is malformed or has an invalid claim")
	// ErrWrongUser: the second factor was passed, but by another user than the one the sign-in
	// was started for: the ID token's sub, preferred_username and email all differ from the
	// login hint given to AuthCodeURL (Callback), from the user given to Result.CheckUser, or
	// from the visid id given to Result.CheckSubject.
	// Nobody may be signed in: someone who knows the first factor of one user passed the
	// second factor of another.
	ErrWrongUser = errors.New("rp: the second factor was passed by another user than the sign-in was started for")
	// ErrSignInFirst: the provider refused to let EnrollURL replace the user's second factor
	// (its answer was login_required): replacing a factor needs a recent sign-in with it. Sign
	// the user in with both factors, then call ReenrollURL with the Result.
	ErrSignInFirst = errors.New("rp: replacing the second factor needs a recent sign-in with it")
	// ErrDiscovery: New could not fetch the provider's discovery document (the provider is
	// unreachable or answered an error; the network error is wrapped too) or cannot work with
	// it (another issuer, no EdDSA, no iss parameter, no S256).
	ErrDiscovery = errors.New("rp: provider discovery failed")
	// ErrClient: the provider does not accept the client id and secret (CheckClient): the client
	// is unknown to the tenant, or the secret is wrong or was rotated.
	ErrClient = errors.New("rp: the provider does not accept the client id and secret")
)

// AccessDenied is the AuthError.Code of a user who did not pass the second factor (a wrong
// factor, an unknown, inactive or locked user, or a cancel: the provider does not say which).
const AccessDenied = "access_denied"

// LoginRequired is the AuthError.Code with which the enrollment endpoint refuses to replace a
// user's factor without proof of a recent sign-in; EnrollURL and ReenrollURL wrap such an
// answer with ErrSignInFirst too.
const LoginRequired = "login_required"

// AuthError is an OAuth 2.0 error answer of the provider: the callback's error parameter (the
// user was denied, for instance, with Code "access_denied") or an error answer of the token
// endpoint (such as "invalid_grant" for a code that was already used).
type AuthError struct {
	// Code is the error code, such as "access_denied", "invalid_grant" or "server_error".
	Code string
	// Description is the provider's error_description: for developers and logs, not for
	// showing to users as is.
	Description string
	// URI is the provider's error_uri, if any.
	URI string
	// Enrollment reports that the error ended an enrollment that EnrollURL started (the user
	// cancelled it, for instance), not a sign-in.
	Enrollment bool
	// LockedUntil is set when the sign-in ended on a locked second factor: visid says so, and
	// until when, to a client that must push every sign-in (the client's RequirePAR, or the
	// provider's), whose sign-ins only its backend starts after the first factor. The
	// application may tell the person when to try again. Zero for every other error, and for
	// a lock of any other client's sign-in (that answer would tell a stranger who is enrolled).
	LockedUntil time.Time
}

// lockedUntil reads the locked_until of an access_denied callback: zero when absent or not a
// time.
func lockedUntil(q url.Values) time.Time {
	if q.Get("error") != AccessDenied {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, q.Get("locked_until"))
	if err != nil {
		return time.Time{}
	}
	return t
}

func (e *AuthError) Error() string {
	if e.Description == "" {
		return "rp: the provider answered " + e.Code
	}
	return "rp: the provider answered " + e.Code + ": " + e.Description
}
