package oidc2fa

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// errSignInFirst: a client asked to replace a user's factor without proof of a recent sign-in
// with it.
var errSignInFirst = errors.New("replacing the second factor needs a recent sign-in with it")

// maxIDTokenHintBytes bounds an id_token_hint; the provider's own tokens are far smaller.
const maxIDTokenHintBytes = 8 << 10

// clockSkew is what the provider allows for a token's auth_time to lie in its future: tokens it
// signed itself, perhaps on another instance.
const clockSkew = time.Minute

// checkIDTokenHint checks that raw is an unexpired ID token this provider signed for tenant,
// issued to clientID for subject, whose auth_time is at most maxAge old: the proof a client
// gives that the user has just passed the current second factor. The error says why not, for
// the log; it never quotes the token.
func (p *provider) checkIDTokenHint(ctx context.Context, tenant, clientID, subject, raw string, maxAge time.Duration) error {
	if len(raw) > maxIDTokenHintBytes {
		return errors.New("the id_token_hint is too long")
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return errors.New("the id_token_hint is not a compact JWS")
	}
	var header struct {
		Alg  string   `json:"alg"`
		Kid  string   `json:"kid"`
		Crit []string `json:"crit"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return fmt.Errorf("the id_token_hint's header: %w", err)
	}
	if !ValidSigningAlgorithm(header.Alg) || header.Kid == "" || len(header.Crit) > 0 {
		return errors.New("the id_token_hint is not a token of this provider's algorithms with a kid")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return errors.New("the id_token_hint's signature is malformed")
	}
	keys, err := p.cfg.Signer.Keys(ctx, tenant)
	if err != nil {
		return fmt.Errorf("reading the signing keys: %w", err)
	}
	verified := false
	for _, k := range keys {
		if k.KID == header.Kid {
			verified = verifySignature(k, header.Alg, []byte(parts[0]+"."+parts[1]), sig)
			break
		}
	}
	if !verified {
		return errors.New("the id_token_hint is not signed by a key of this provider")
	}
	var claims struct {
		Iss      string `json:"iss"`
		Sub      string `json:"sub"`
		Aud      any    `json:"aud"`
		Exp      int64  `json:"exp"`
		AuthTime int64  `json:"auth_time"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return fmt.Errorf("the id_token_hint's claims: %w", err)
	}
	now := p.now()
	switch aud, _ := claims.Aud.(string); {
	case claims.Iss != p.issuer(tenant):
		return errors.New("the id_token_hint was issued for another tenant")
	case aud != clientID:
		return errors.New("the id_token_hint was issued to another client")
	case claims.Sub != subject:
		return errors.New("the id_token_hint names another user")
	case !now.Before(time.Unix(claims.Exp, 0)):
		return errors.New("the id_token_hint has expired")
	case claims.AuthTime == 0:
		return errors.New("the id_token_hint has no auth_time")
	case now.Sub(time.Unix(claims.AuthTime, 0)) > maxAge:
		return fmt.Errorf("the sign-in of the id_token_hint is older than %s", maxAge)
	case time.Unix(claims.AuthTime, 0).Sub(now) > clockSkew:
		return errors.New("the id_token_hint's auth_time is in the future")
	}
	return nil
}

// decodeSegment decodes one base64url segment of a compact JWS as JSON into v.
func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
