package oidc2fa

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// Minting an ID token should cost little more than the signature inside it, for every
// algorithm. Compare in one run:
//
//	go test ./oidc2fa/ -run '^$' -bench 'RawSign|MintIDToken|JWXJWTSign' -count 5
//
// BenchmarkRawSign/ALG is the baseline (the crypto package's signature alone, over the claims
// the token carries: Ed25519, RSASSA-PKCS1-v1_5 or ECDSA of their SHA-256);
// BenchmarkMintIDToken/ALG is what the token endpoint does (claims written by hand, then
// KeyRing.SignWith); BenchmarkJWXJWTSign is an EdDSA token through jwx's generic jwt.Sign, for
// comparison. The target is MintIDToken ≤ 1.5 × RawSign for each algorithm.

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

// benchSigners are the keys of each algorithm, made once per benchmark.
func benchSigners(b *testing.B) map[string]crypto.Signer {
	b.Helper()
	rsaKey, err := rsa.GenerateKey(rand.Reader, rsaBits)
	if err != nil {
		b.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	return map[string]crypto.Signer{AlgEdDSA: benchKey(b), AlgEd25519: benchKey(b), AlgRS256: rsaKey, AlgES256: ecKey}
}

func BenchmarkRawSign(b *testing.B) {
	msg := benchIDToken().appendJSON(nil)
	for _, alg := range SigningAlgorithms() {
		b.Run(alg, func(b *testing.B) {
			signer := benchSigners(b)[alg]
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				switch k := signer.(type) {
				case ed25519.PrivateKey:
					_ = ed25519.Sign(k, msg)
				case *rsa.PrivateKey:
					sum := sha256.Sum256(msg)
					if _, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, sum[:]); err != nil {
						b.Fatal(err)
					}
				case *ecdsa.PrivateKey:
					sum := sha256.Sum256(msg)
					if _, _, err := ecdsa.Sign(rand.Reader, k, sum[:]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func BenchmarkMintIDToken(b *testing.B) {
	ctx := context.Background()
	tok := benchIDToken()
	for _, alg := range SigningAlgorithms() {
		b.Run(alg, func(b *testing.B) {
			ring, err := NewKeyRing(KeyRingConfig{})
			if err != nil {
				b.Fatal(err)
			}
			k, err := newRingKey("acme", alg, benchSigners(b)[alg])
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			k.created = now
			if _, err := ring.addKey(ctx, "acme", ring.entry("acme", true, now), k, now); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(tok.appendJSON(nil))))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := mintIDTokenWith(ctx, ring, "acme", alg, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
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
