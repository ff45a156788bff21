package oidc2fa

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/internal/jsonenc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
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
	// first factor named; sub stays the stable identifier. The provider puts a name in the
	// token only when it names this user alone (see namesOf), so a relying party that finds
	// its login hint in one of these claims knows that the hint names this user and nobody
	// else; left out when empty.
	PreferredUsername string
	// Email is "email": the user's primary email when the token was issued; left out when
	// empty (the user has none, or it names another user too).
	Email string
}

// namesOf returns the userName and primary email of u for the name claims of an ID token: each
// only when, used as a login hint, it would name u and nobody else (as lookupHint resolves
// hints), and "" when it would name another user too. A relying party compares these claims
// with the hint its first factor gives, so a name shared with another user (alice's primary
// email as mallory's userName, two users with one primary email) must not vouch for either.
func namesOf(ctx context.Context, users store.Users, tenant string, u *store.User) (userName, email string, err error) {
	// userNames are unique: only another user's primary email or id can share u's.
	shared, err := namedElsewhere(ctx, users, tenant, u.ID, u.UserName, false)
	if err != nil {
		return "", "", err
	}
	if !shared {
		userName = u.UserName
	}
	if e := primaryEmail(u); e != "" {
		if shared, err = namedElsewhere(ctx, users, tenant, u.ID, e, true); err != nil {
			return "", "", err
		}
		if !shared {
			email = e
		}
	}
	return userName, email, nil
}

// namedElsewhere reports whether name, as a login hint, matches a user other than self: as a
// visid id, as a primary email or, when byUserName is set, as a userName.
func namedElsewhere(ctx context.Context, users store.Users, tenant, self, name string, byUserName bool) (bool, error) {
	if folded := schema.Fold(name); strings.HasPrefix(folded, "user_") && folded != self {
		_, err := users.Get(ctx, tenant, folded)
		switch {
		case err == nil:
			return true, nil
		case !errors.Is(err, store.ErrNotFound):
			return false, err
		}
	}
	lit := filter.Literal{Kind: filter.KindString, Str: name}.String()
	queries := []string{`emails[value eq ` + lit + ` and primary eq true]`}
	if byUserName {
		queries = append(queries, `userName eq `+lit)
	}
	for _, f := range queries {
		expr, err := filter.Parse(f, schema.User())
		if err != nil {
			return true, nil // a name no filter can look up vouches for nobody
		}
		page, err := users.List(ctx, tenant, store.Query{Filter: expr, StartIndex: 1, Count: 2})
		if err != nil {
			return false, err
		}
		for _, o := range page.Resources {
			if o.ID != self {
				return true, nil
			}
		}
		if page.TotalResults > len(page.Resources) {
			return true, nil
		}
	}
	return false, nil
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
