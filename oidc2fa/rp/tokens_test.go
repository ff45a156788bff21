package rp_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Hand-made compact JWS, for tokens no honest signer would make. They run on the server's
// goroutine (inside idp.forge), so they report errors in the token, not with testify.

func b64JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unencodable"
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func signingInput(header, claims map[string]any) string {
	return b64JSON(header) + "." + b64JSON(claims)
}

func withSignature(input string, sig []byte) string {
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func signEd25519(priv ed25519.PrivateKey, header, claims map[string]any) string {
	in := signingInput(header, claims)
	return withSignature(in, ed25519.Sign(priv, []byte(in)))
}

// signHS256 signs with HMAC-SHA256 under secret: the classic confusion attack passes the
// provider's public key as the secret.
func signHS256(secret []byte, header, claims map[string]any) string {
	in := signingInput(header, claims)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(in))
	return withSignature(in, m.Sum(nil))
}

func signRS256(key *rsa.PrivateKey, header, claims map[string]any) string {
	in := signingInput(header, claims)
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "unsignable"
	}
	return withSignature(in, sig)
}

// unsigned is an alg "none" token: an empty signature.
func unsigned(header, claims map[string]any) string { return signingInput(header, claims) + "." }

// headerOf decodes the protected header of a compact JWS.
func headerOf(token string) map[string]any {
	h := map[string]any{}
	part, _, _ := strings.Cut(token, ".")
	b, _ := base64.RawURLEncoding.DecodeString(part)
	_ = json.Unmarshal(b, &h)
	return h
}
