package oidc2fa

import (
	"context"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"
)

// IDToken is the claims set of an ID token the provider issues (OpenID Connect Core 1.0 §2).
// There is no at_hash: the token response carries no access token.
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
}

// mintIDToken checks t, writes its claims and has s sign them for tenant, returning the compact
// JWS. A token without iss, sub, aud, iat or exp, or one that expires before it is issued, is
// an error and is never signed.
func mintIDToken(ctx context.Context, s Signer, tenant string, t *IDToken) (string, error) {
	switch {
	case t.Issuer == "" || t.Subject == "" || t.Audience == "":
		return "", errors.New("oidc2fa: ID token needs iss, sub and aud")
	case t.IssuedAt.IsZero() || t.Expiry.IsZero():
		return "", errors.New("oidc2fa: ID token needs iat and exp")
	case !t.Expiry.After(t.IssuedAt):
		return "", errors.New("oidc2fa: ID token expires before it is issued")
	}
	return s.Sign(ctx, tenant, t.appendJSON(make([]byte, 0, 512)))
}

// appendJSON appends the claims of t as a JSON object to dst: the members in the order iss, sub,
// aud, exp, iat, auth_time, nonce, amr, with exactly the bytes encoding/json writes for the
// equivalent struct (HTML-safe escaping included).
func (t *IDToken) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"iss":`...)
	dst = appendJSONString(dst, t.Issuer)
	dst = append(dst, `,"sub":`...)
	dst = appendJSONString(dst, t.Subject)
	dst = append(dst, `,"aud":`...)
	dst = appendJSONString(dst, t.Audience)
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
		dst = appendJSONString(dst, t.Nonce)
	}
	if len(t.AMR) > 0 {
		dst = append(dst, `,"amr":[`...)
		for i, m := range t.AMR {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, m)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string the way encoding/json.Marshal does: `"` and `\`
// escaped, \b \f \n \r \t short, other control characters and <, >, & as \u00XX, U+2028 and
// U+2029 as \u2028 and \u2029, and each byte of invalid UTF-8 as \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
