package oidc2fa

import (
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// Minting an ID token should cost little more than the Ed25519 signature inside it. Compare in
// one run:
//
//	go test ./oidc2fa/ -run '^$' -bench 'Ed25519Sign|MintIDToken|JWXJWTSign' -count 5
//
// BenchmarkEd25519Sign is the baseline (crypto/ed25519 alone, over a message as long as the
// claims); BenchmarkMintIDToken is what the token endpoint does (claims written by hand, then
// KeyRing.Sign); BenchmarkJWXJWTSign is the same token through jwx's generic jwt.Sign, for
// comparison. The target is MintIDToken ≤ 1.5 × Ed25519Sign.

// benchIDToken is a realistic ID token: ids, issuer and nonce of the lengths the provider uses.
func benchIDToken() *IDToken {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return &IDToken{
		Issuer:   "https://id.example.com/oidc/acme",
		Subject:  "user_01J9Z3Q4X7M8N2P5R6S7T8V9W0",
		Audience: "client_01J9Z3Q4X7M8N2P5R6S7T8V9W1",
		Expiry:   now.Add(DefaultIDTokenLifetime),
		IssuedAt: now,
		AuthTime: now.Add(-20 * time.Second),
		Nonce:    "n-0S6_WzA2Mj7fKx1Qv9rT3sLp8uYbHcNdEeGgJiKkM",
		AMR:      []string{"pwd", "user"},
	}
}

func benchKey(b *testing.B) ed25519.PrivateKey {
	b.Helper()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func BenchmarkEd25519Sign(b *testing.B) {
	priv := benchKey(b)
	msg := benchIDToken().appendJSON(nil)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		_ = ed25519.Sign(priv, msg)
	}
}

func BenchmarkMintIDToken(b *testing.B) {
	ctx := context.Background()
	ring, err := NewKeyRing(KeyRingConfig{Keys: []ed25519.PrivateKey{benchKey(b)}})
	if err != nil {
		b.Fatal(err)
	}
	tok := benchIDToken()
	b.SetBytes(int64(len(tok.appendJSON(nil))))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mintIDToken(ctx, ring, "acme", tok); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJWXJWTSign(b *testing.B) {
	priv := benchKey(b)
	key, err := jwk.FromRaw(priv)
	if err != nil {
		b.Fatal(err)
	}
	kid, err := keyID(priv.Public().(ed25519.PublicKey))
	if err != nil {
		b.Fatal(err)
	}
	if err := key.Set(jwk.KeyIDKey, kid); err != nil {
		b.Fatal(err)
	}
	t := benchIDToken()
	b.SetBytes(int64(len(t.appendJSON(nil))))
	b.ReportAllocs()
	for b.Loop() {
		tok, err := jwt.NewBuilder().
			Issuer(t.Issuer).
			Subject(t.Subject).
			Audience([]string{t.Audience}).
			Expiration(t.Expiry).
			IssuedAt(t.IssuedAt).
			Claim("auth_time", t.AuthTime.Unix()).
			Claim("nonce", t.Nonce).
			Claim("amr", t.AMR).
			Build()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := jwt.Sign(tok, jwt.WithKey(jwa.EdDSA, key)); err != nil {
			b.Fatal(err)
		}
	}
}
