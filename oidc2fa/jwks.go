package oidc2fa

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// jwksJSON renders keys as a JWK set (RFC 7517 §5) of Ed25519 public keys (RFC 8037):
//
//	{"keys":[{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","use":"sig","kid":"…","x":"…"}]}
//
// in the order given. No keys give {"keys":[]}. A key without a kid, with a kid used twice or
// that is not 32 bytes long is an error: a signer handed over something no verifier could use.
func jwksJSON(keys []PublicKey) ([]byte, error) {
	type okpJSON struct {
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		Alg string `json:"alg"`
		Use string `json:"use"`
		KID string `json:"kid"`
		X   string `json:"x"`
	}
	set := struct {
		Keys []okpJSON `json:"keys"`
	}{Keys: make([]okpJSON, 0, len(keys))}
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		switch {
		case k.KID == "":
			return nil, fmt.Errorf("oidc2fa: JWKS key %d has no kid", i)
		case seen[k.KID]:
			return nil, fmt.Errorf("oidc2fa: JWKS kid %q appears twice", k.KID)
		case len(k.Key) != ed25519.PublicKeySize:
			return nil, fmt.Errorf("oidc2fa: JWKS key %q: %d bytes, want an Ed25519 public key of %d", k.KID, len(k.Key), ed25519.PublicKeySize)
		}
		seen[k.KID] = true
		set.Keys = append(set.Keys, okpJSON{
			Kty: "OKP", Crv: "Ed25519", Alg: "EdDSA", Use: "sig",
			KID: k.KID,
			X:   base64.RawURLEncoding.EncodeToString(k.Key),
		})
	}
	out, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: JWKS: %w", err)
	}
	return out, nil
}
