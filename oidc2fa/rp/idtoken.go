package rp

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// verify checks the ID token raw (OpenID Connect Core §3.1.3.7) and returns what it says. The
// signature is checked first, and only with EdDSA: the token's header must say so, whatever the
// JWKS claims about its keys.
func (p *RP) verify(ctx context.Context, raw, nonce string) (*Result, error) {
	if strings.Count(raw, ".") != 2 {
		return nil, fmt.Errorf("rp: ID token: not a compact JWS: %w", ErrInvalidToken)
	}
	msg, err := jws.Parse([]byte(raw), jws.WithCompact())
	if err != nil {
		return nil, fmt.Errorf("rp: ID token: %w: %w", ErrInvalidToken, err)
	}
	sigs := msg.Signatures()
	if len(sigs) != 1 {
		return nil, fmt.Errorf("rp: ID token: %d signatures: %w", len(sigs), ErrInvalidToken)
	}
	h := sigs[0].ProtectedHeaders()
	if alg := h.Algorithm(); alg != jwa.EdDSA {
		return nil, fmt.Errorf("rp: ID token: alg %q is not EdDSA: %w", alg, ErrSignature)
	}
	if len(h.Critical()) > 0 {
		return nil, fmt.Errorf("rp: ID token: critical header parameters %q are not understood: %w", h.Critical(), ErrInvalidToken)
	}
	if typ := h.Type(); typ != "" && !strings.EqualFold(typ, "JWT") {
		return nil, fmt.Errorf("rp: ID token: typ %q is not JWT: %w", typ, ErrInvalidToken)
	}
	kid := h.KeyID()
	if kid == "" {
		return nil, fmt.Errorf("rp: ID token: the header has no kid: %w", ErrSignature)
	}
	key, err := p.keys.get(ctx, kid)
	if err != nil {
		return nil, err
	}
	payload, err := jws.Verify([]byte(raw), jws.WithKey(jwa.EdDSA, key), jws.WithCompact())
	if err != nil {
		return nil, fmt.Errorf("rp: ID token: %w: %w", ErrSignature, err)
	}

	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil || claims == nil {
		return nil, fmt.Errorf("rp: ID token: the claims are not a JSON object: %w", ErrInvalidToken)
	}
	now := p.now()
	if iss, _ := claims["iss"].(string); iss != p.issuer {
		return nil, fmt.Errorf("rp: ID token: iss %q is not %q: %w", iss, p.issuer, ErrIssuer)
	}
	if err := p.checkAudience(claims); err != nil {
		return nil, err
	}
	exp, ok := numericDate(claims, "exp")
	if !ok {
		return nil, fmt.Errorf("rp: ID token: exp is missing or not a number: %w", ErrInvalidToken)
	}
	if !now.Before(exp.Add(p.leeway)) {
		return nil, fmt.Errorf("rp: ID token: expired at %s: %w", exp.UTC().Format(time.RFC3339), ErrExpired)
	}
	iat, ok := numericDate(claims, "iat")
	if !ok {
		return nil, fmt.Errorf("rp: ID token: iat is missing or not a number: %w", ErrInvalidToken)
	}
	if iat.After(now.Add(p.leeway)) {
		return nil, fmt.Errorf("rp: ID token: issued in the future (%s); check the clocks: %w", iat.UTC().Format(time.RFC3339), ErrInvalidToken)
	}
	if _, present := claims["nbf"]; present {
		nbf, ok := numericDate(claims, "nbf")
		if !ok || nbf.After(now.Add(p.leeway)) {
			return nil, fmt.Errorf("rp: ID token: nbf is not a number or in the future: %w", ErrInvalidToken)
		}
	}
	got, _ := claims["nonce"].(string)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(nonce)) != 1 {
		return nil, fmt.Errorf("rp: ID token: %w", ErrNonce)
	}
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return nil, fmt.Errorf("rp: ID token: sub is missing: %w", ErrInvalidToken)
	}
	res := &Result{Subject: sub, Claims: claims, IDToken: raw}
	for name, dst := range map[string]*string{"preferred_username": &res.PreferredUsername, "email": &res.Email} {
		if v, present := claims[name]; present {
			if *dst, ok = v.(string); !ok {
				return nil, fmt.Errorf("rp: ID token: %s is not a string: %w", name, ErrInvalidToken)
			}
		}
	}
	if _, present := claims["auth_time"]; present {
		if res.AuthTime, ok = numericDate(claims, "auth_time"); !ok {
			return nil, fmt.Errorf("rp: ID token: auth_time is not a number: %w", ErrInvalidToken)
		}
	}
	if amr, present := claims["amr"]; present {
		list, ok := amr.([]any)
		if !ok {
			return nil, fmt.Errorf("rp: ID token: amr is not an array: %w", ErrInvalidToken)
		}
		for _, m := range list {
			s, ok := m.(string)
			if !ok {
				return nil, fmt.Errorf("rp: ID token: amr holds a non-string: %w", ErrInvalidToken)
			}
			res.AMR = append(res.AMR, s)
		}
	}
	return res, nil
}

// checkAudience requires aud to name this client and nobody else (a string or an array of one),
// and azp, when present, to be this client.
func (p *RP) checkAudience(claims map[string]any) error {
	var auds []string
	switch aud := claims["aud"].(type) {
	case string:
		auds = []string{aud}
	case []any:
		for _, a := range aud {
			s, ok := a.(string)
			if !ok {
				return fmt.Errorf("rp: ID token: aud holds a non-string: %w", ErrAudience)
			}
			auds = append(auds, s)
		}
	}
	if len(auds) == 0 {
		return fmt.Errorf("rp: ID token: aud is missing: %w", ErrAudience)
	}
	for _, a := range auds {
		if a != p.cfg.ClientID {
			return fmt.Errorf("rp: ID token: aud %q is not this client %q: %w", auds, p.cfg.ClientID, ErrAudience)
		}
	}
	if azp, present := claims["azp"]; present && azp != p.cfg.ClientID {
		return fmt.Errorf("rp: ID token: azp %q is not this client %q: %w", azp, p.cfg.ClientID, ErrAudience)
	}
	return nil
}

// numericDate reads a NumericDate claim (seconds since the epoch, possibly fractional).
func numericDate(claims map[string]any, name string) (time.Time, bool) {
	f, ok := claims[name].(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1<<40 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
}
