package oidc2fa

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/visid/visid/internal/jsonenc"
)

// IDToken is the claims set of an ID token the provider issues (OpenID Connect Core 1.0 §2).
// There is no at_hash: an access token, when a client has one, is good only at the UserInfo
// endpoint, which returns the same claims.
type IDToken struct {
	// Issuer is "iss": the issuer URL of the tenant, BaseURL + "/" + tenant.
	Issuer string
	// Subject is "sub": the user's id (user_…), stable and never reassigned.
	Subject string
	// Audience is "aud": the client_id of the relying party, as a single string.
	Audience string
	// Expiry is "exp"; IssuedAt is "iat"; AuthTime is "auth_time", when the user passed the
	// second factor. All three are written as NumericDate, whole seconds since the epoch
	// (fractions truncated); auth_time is left out when AuthTime is zero.
	Expiry, IssuedAt, AuthTime time.Time
	// Nonce is "nonce": the nonce of the authorization request, echoed; left out when empty.
	Nonce string
	// AMR is "amr": the authentication methods used (RFC 8176 values where one fits); left out
	// when empty.
	AMR []string
	// PreferredUsername is "preferred_username": the user's userName when the token was issued.
	// With Email it lets the relying party check that the second factor proved the user its
	// first factor named; sub stays the stable identifier.
	PreferredUsername string
	// Email is "email": the user's primary email when the token was issued; left out when the
	// user has none.
	Email string
}

// mintIDToken is mintIDTokenWith for EdDSA.
func mintIDToken(ctx context.Context, s Signer, tenant string, t *IDToken) (string, error) {
	return mintIDTokenWith(ctx, s, tenant, AlgEdDSA, t)
}

// mintIDTokenWith checks t, writes its claims and has s sign them for tenant with the JWS
// algorithm alg, returning the compact JWS. A token without iss, sub, aud, iat or exp, or one
// that expires before it is issued, is an error and is never signed; so is an alg other than
// EdDSA that s does not offer as an AlgorithmSigner.
func mintIDTokenWith(ctx context.Context, s Signer, tenant, alg string, t *IDToken) (string, error) {
	switch {
	case t.Issuer == "" || t.Subject == "" || t.Audience == "":
		return "", errors.New("oidc2fa: ID token needs iss, sub and aud")
	case t.IssuedAt.IsZero() || t.Expiry.IsZero():
		return "", errors.New("oidc2fa: ID token needs iat and exp")
	case !t.Expiry.After(t.IssuedAt):
		return "", errors.New("oidc2fa: ID token expires before it is issued")
	}
	if alg == AlgEdDSA {
		return s.Sign(ctx, tenant, t.appendJSON(make([]byte, 0, 512)))
	}
	as, ok := s.(AlgorithmSigner)
	if !ok || !slices.Contains(as.Algorithms(), alg) {
		return "", fmt.Errorf("oidc2fa: the signer does not sign %q ID tokens", alg)
	}
	return as.SignWith(ctx, tenant, alg, t.appendJSON(make([]byte, 0, 512)))
}

// appendJSON appends the claims of t as a JSON object to dst: the members in the order iss, sub,
// aud, exp, iat, auth_time, nonce, amr, preferred_username, email, with exactly the bytes encoding/json writes for the
// equivalent struct (HTML-safe escaping included).
func (t *IDToken) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"iss":`...)
	dst = jsonenc.AppendString(dst, t.Issuer)
	dst = append(dst, `,"sub":`...)
	dst = jsonenc.AppendString(dst, t.Subject)
	dst = append(dst, `,"aud":`...)
	dst = jsonenc.AppendString(dst, t.Audience)
	dst = append(dst, `,"exp":`...)
	dst = strconv.AppendInt(dst, t.Expiry.Unix(), 10)
	dst = append(dst, `,"iat":`...)
	dst = strconv.AppendInt(dst, t.IssuedAt.Unix(), 10)
	if !t.AuthTime.IsZero() {
		dst = append(dst, `,"auth_time":`...)
		dst = strconv.AppendInt(dst, t.AuthTime.Unix(), 10)
	}
	if t.Nonce != "" {
		dst = append(dst, `,"nonce":`...)
		dst = jsonenc.AppendString(dst, t.Nonce)
	}
	if len(t.AMR) > 0 {
		dst = append(dst, `,"amr":[`...)
		for i, m := range t.AMR {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonenc.AppendString(dst, m)
		}
		dst = append(dst, ']')
	}
	if t.PreferredUsername != "" {
		dst = append(dst, `,"preferred_username":`...)
		dst = jsonenc.AppendString(dst, t.PreferredUsername)
	}
	if t.Email != "" {
		dst = append(dst, `,"email":`...)
		dst = jsonenc.AppendString(dst, t.Email)
	}
	return append(dst, '}')
}
