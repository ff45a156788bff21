package oidc2fa

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
)

// jwkJSON is one public key of the JWKS: an OKP key (EdDSA, Ed25519; RFC 8037), an RSA key
// (RS256) or an EC key on P-256 (ES256; RFC 7518 §6).
type jwkJSON struct {
	Kty string `json:"kty"`
	Crv string `json:"crv,omitempty"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	KID string `json:"kid"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
}

// jwksJSON renders keys as a JWK set (RFC 7517 §5), such as
//
//	{"keys":[{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","use":"sig","kid":"…","x":"…"}]}
//
// in the order given. No keys give {"keys":[]}. A key without a kid, with a kid used twice, of
// an unknown algorithm or whose Key does not fit its algorithm is an error: a signer handed over
// something no verifier could use.
func jwksJSON(keys []PublicKey) ([]byte, error) {
	set := struct {
		Keys []jwkJSON `json:"keys"`
	}{Keys: make([]jwkJSON, 0, len(keys))}
	seen := make(map[string]bool, len(keys))
	enc := base64.RawURLEncoding
	for i, k := range keys {
		switch {
		case k.KID == "":
			return nil, fmt.Errorf("oidc2fa: JWKS key %d has no kid", i)
		case seen[k.KID]:
			return nil, fmt.Errorf("oidc2fa: JWKS kid %q appears twice", k.KID)
		}
		seen[k.KID] = true
		alg := algOrDefault(k.Algorithm)
		j := jwkJSON{Alg: alg, Use: "sig", KID: k.KID}
		switch pub := k.Key.(type) {
		case ed25519.PublicKey:
			if (alg != AlgEdDSA && alg != AlgEd25519) || len(pub) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("oidc2fa: JWKS key %q: %d bytes for %s, want an Ed25519 public key of %d", k.KID, len(pub), alg, ed25519.PublicKeySize)
			}
			j.Kty, j.Crv, j.X = "OKP", "Ed25519", enc.EncodeToString(pub)
		case *rsa.PublicKey:
			if alg != AlgRS256 || pub.N == nil || pub.N.BitLen() < rsaBits {
				return nil, fmt.Errorf("oidc2fa: JWKS key %q: an RSA key does not fit %s", k.KID, alg)
			}
			j.Kty, j.N, j.E = "RSA", enc.EncodeToString(pub.N.Bytes()), enc.EncodeToString(big.NewInt(int64(pub.E)).Bytes())
		case *ecdsa.PublicKey:
			if alg != AlgES256 || pub.Curve != elliptic.P256() {
				return nil, fmt.Errorf("oidc2fa: JWKS key %q: an ECDSA key does not fit %s", k.KID, alg)
			}
			x, y := make([]byte, 32), make([]byte, 32)
			pub.X.FillBytes(x)
			pub.Y.FillBytes(y)
			j.Kty, j.Crv, j.X, j.Y = "EC", "P-256", enc.EncodeToString(x), enc.EncodeToString(y)
		default:
			return nil, fmt.Errorf("oidc2fa: JWKS key %q: a key of type %T", k.KID, k.Key)
		}
		set.Keys = append(set.Keys, j)
	}
	out, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: JWKS: %w", err)
	}
	return out, nil
}

// verifySignature reports whether sig is k's signature of input under the JWS algorithm alg,
// which must be k's.
func verifySignature(k PublicKey, alg string, input, sig []byte) bool {
	if ka := k.Algorithm; ka != alg && (ka != "" || alg != AlgEdDSA) {
		return false
	}
	switch pub := k.Key.(type) {
	case ed25519.PublicKey:
		return len(pub) == ed25519.PublicKeySize && len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, input, sig)
	case *rsa.PublicKey:
		sum := sha256.Sum256(input)
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil
	case *ecdsa.PublicKey:
		if len(sig) != 64 {
			return false
		}
		sum := sha256.Sum256(input)
		return ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
	}
	return false
}
