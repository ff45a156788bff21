package oidc2fa

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idTokenStd is IDToken as encoding/json would write it: the reference for appendJSON.
type idTokenStd struct {
	Iss      string   `json:"iss"`
	Sub      string   `json:"sub"`
	Aud      string   `json:"aud"`
	Exp      int64    `json:"exp"`
	Iat      int64    `json:"iat"`
	AuthTime *int64   `json:"auth_time,omitempty"`
	Nonce    string   `json:"nonce,omitempty"`
	AMR      []string `json:"amr,omitempty"`
	Username string   `json:"preferred_username,omitempty"`
	Email    string   `json:"email,omitempty"`
}

func idTokenStdJSON(t testing.TB, tok *IDToken) string {
	t.Helper()
	std := idTokenStd{
		Iss: tok.Issuer, Sub: tok.Subject, Aud: tok.Audience,
		Exp: tok.Expiry.Unix(), Iat: tok.IssuedAt.Unix(),
		Nonce: tok.Nonce, AMR: tok.AMR, Username: tok.PreferredUsername, Email: tok.Email,
	}
	if !tok.AuthTime.IsZero() {
		at := tok.AuthTime.Unix()
		std.AuthTime = &at
	}
	out, err := json.Marshal(std)
	require.NoError(t, err)
	return string(out)
}

// idTokenWeirdStrings are strings whose JSON escaping is easy to get wrong.
var idTokenWeirdStrings = []string{
	"",
	"plain",
	`quote " and backslash \ and slash /`,
	"\x00\x01\x07\x08\x09\x0a\x0b\x0c\x0d\x1b\x1f\x20\x7f",
	"\b\f\n\r\t",
	"<script>alert('&amp;')</script>",
	"é ü ß € 日本語 😀",
	"line\u2028separator\u2029paragraph",
	"\u2027\u202a", // neighbours of U+2028/9, not escaped
	"bad \x80 byte", "\xff\xfe", "truncated \xc3", "truncated U+2028 \xe2\x80",
	"surrogate \xed\xa0\x80", "overlong \xc0\xaf", "\xf4\x90\x80\x80 beyond U+10FFFF",
	"\ufffd real replacement char",
	strings.Repeat("<&>", 100),
	"https://id.example.com/oidc/acme",
}

// randomWeirdString builds a string out of pieces that exercise every escaping branch.
func randomWeirdString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", " ", "\"", "\\", "/", "<", ">", "&", "\x00", "\x1f", "\n", "\t", "\x7f",
		"é", "€", "😀", "\u2028", "\u2029", "\x80", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "'", "\ufffd"}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func TestIDTokenJSONMatchesEncodingJSON(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var tokens []*IDToken
	for _, s := range idTokenWeirdStrings {
		tokens = append(tokens, &IDToken{
			Issuer: s, Subject: s, Audience: s, Nonce: s, AMR: []string{s, "pwd"},
			PreferredUsername: s, Email: s,
			Expiry: base.Add(time.Hour), IssuedAt: base, AuthTime: base.Add(-time.Second),
		})
	}
	tokens = append(tokens,
		&IDToken{Issuer: "i", Subject: "s", Audience: "a"},                    // zero times: auth_time left out, exp/iat as Unix() of zero
		&IDToken{Issuer: "i", Subject: "s", Audience: "a", AMR: []string{}},   // empty amr left out
		&IDToken{Issuer: "i", Subject: "s", Audience: "a", AMR: []string{""}}, // one empty method kept
		&IDToken{Expiry: time.Unix(0, 0), IssuedAt: time.Unix(-1, 0), AuthTime: time.Unix(-1, 999999999)},
		&IDToken{Expiry: base.Add(999 * time.Millisecond).In(time.FixedZone("x", 3600)), IssuedAt: base.Add(-time.Nanosecond)},
	)
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		amr := make([]string, r.IntN(3))
		for i := range amr {
			amr[i] = randomWeirdString(r)
		}
		at := time.Time{}
		if r.IntN(4) > 0 {
			at = time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9))
		}
		tokens = append(tokens, &IDToken{
			Issuer: randomWeirdString(r), Subject: randomWeirdString(r), Audience: randomWeirdString(r),
			Nonce: randomWeirdString(r), AMR: amr,
			PreferredUsername: randomWeirdString(r), Email: randomWeirdString(r),
			Expiry:   time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9)),
			IssuedAt: time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9)),
			AuthTime: at,
		})
	}
	for _, tok := range tokens {
		got := string(tok.appendJSON(nil))
		require.Equal(t, idTokenStdJSON(t, tok), got, "%#v", tok)
		require.True(t, json.Valid([]byte(got)))
	}

	// appendJSON appends: a prefix stays.
	assert.True(t, strings.HasPrefix(string(tokens[0].appendJSON([]byte("xyz"))), `xyz{"iss":`))
}

func FuzzIDTokenJSON(f *testing.F) {
	for _, s := range idTokenWeirdStrings {
		f.Add(s, s, int64(1772366400), int64(0))
	}
	f.Fuzz(func(t *testing.T, s, nonce string, sec, nsec int64) {
		tok := &IDToken{
			Issuer: s, Subject: nonce, Audience: s + nonce, Nonce: nonce, AMR: []string{s, nonce},
			PreferredUsername: s, Email: nonce + s,
			Expiry: time.Unix(sec, nsec), IssuedAt: time.Unix(sec/2, 0), AuthTime: time.Unix(nsec, sec),
		}
		if got, want := string(tok.appendJSON(nil)), idTokenStdJSON(t, tok); got != want {
			t.Fatalf("appendJSON = %s, encoding/json = %s", got, want)
		}
	})
}

func TestIDTokenMint(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ring, err := NewKeyRing(KeyRingConfig{Now: func() time.Time { return now }})
	require.NoError(t, err)
	valid := IDToken{
		Issuer:   "https://id.example.com/oidc/acme",
		Subject:  "user_01J9Z3Q4X7M8N2P5R6S7T8V9W0",
		Audience: "client_01J9Z3Q4X7M8N2P5R6S7T8V9W1",
		Expiry:   now.Add(time.Hour),
		IssuedAt: now,
		AuthTime: now.Add(-30 * time.Second),
		Nonce:    "n-0S6_WzA2Mj",
		AMR:      []string{"pwd", "user"},
	}

	t.Run("invalid tokens are not signed", func(t *testing.T) {
		tests := []struct {
			name   string
			change func(*IDToken)
		}{
			{"no iss", func(tok *IDToken) { tok.Issuer = "" }},
			{"no sub", func(tok *IDToken) { tok.Subject = "" }},
			{"no aud", func(tok *IDToken) { tok.Audience = "" }},
			{"no iat", func(tok *IDToken) { tok.IssuedAt = time.Time{} }},
			{"no exp", func(tok *IDToken) { tok.Expiry = time.Time{} }},
			{"exp before iat", func(tok *IDToken) { tok.Expiry = tok.IssuedAt.Add(-time.Second) }},
			{"exp equals iat", func(tok *IDToken) { tok.Expiry = tok.IssuedAt }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tok := valid
				tt.change(&tok)
				s := &countingSigner{Signer: ring}
				got, err := mintIDToken(ctx, s, "acme", &tok)
				assert.Error(t, err)
				assert.Empty(t, got)
				assert.Zero(t, s.calls.Load(), "the signer is not asked")
			})
		}
	})

	t.Run("signer error", func(t *testing.T) {
		boom := errors.New("kms down")
		_, err := mintIDToken(ctx, failingSigner{boom}, "acme", &valid)
		assert.ErrorIs(t, err, boom)
	})

	token, err := mintIDToken(ctx, ring, "acme", &valid)
	require.NoError(t, err)
	keys, err := ring.Keys(ctx, "acme")
	require.NoError(t, err)

	t.Run("claims", func(t *testing.T) {
		payload, err := jws.Verify([]byte(token), jws.WithKey(jwa.EdDSA, keys[0].Key))
		require.NoError(t, err)
		var claims map[string]any
		require.NoError(t, json.Unmarshal(payload, &claims))
		assert.Equal(t, map[string]any{
			"iss":       valid.Issuer,
			"sub":       valid.Subject,
			"aud":       valid.Audience,
			"exp":       float64(now.Add(time.Hour).Unix()),
			"iat":       float64(now.Unix()),
			"auth_time": float64(now.Add(-30 * time.Second).Unix()),
			"nonce":     valid.Nonce,
			"amr":       []any{"pwd", "user"},
		}, claims, "no at_hash, nothing else")
	})

	t.Run("go-oidc verifies it", func(t *testing.T) {
		static := &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{keys[0].Key}}
		v := oidc.NewVerifier(valid.Issuer, static, &oidc.Config{
			ClientID:             valid.Audience,
			SupportedSigningAlgs: []string{oidc.EdDSA},
			Now:                  func() time.Time { return now.Add(time.Minute) },
		})
		idt, err := v.Verify(ctx, token)
		require.NoError(t, err)
		assert.Equal(t, valid.Subject, idt.Subject)
		assert.Equal(t, []string{valid.Audience}, idt.Audience)
		assert.Equal(t, valid.Nonce, idt.Nonce)
		assert.Empty(t, idt.AccessTokenHash)
		assert.True(t, valid.Expiry.Equal(idt.Expiry))
		var extra struct {
			AuthTime int64    `json:"auth_time"`
			AMR      []string `json:"amr"`
		}
		require.NoError(t, idt.Claims(&extra))
		assert.Equal(t, valid.AuthTime.Unix(), extra.AuthTime)
		assert.Equal(t, valid.AMR, extra.AMR)

		// Expired, wrong audience, wrong issuer: refused.
		for name, v := range map[string]*oidc.IDTokenVerifier{
			"expired": oidc.NewVerifier(valid.Issuer, static,
				&oidc.Config{ClientID: valid.Audience, SupportedSigningAlgs: []string{oidc.EdDSA}, Now: func() time.Time { return now.Add(2 * time.Hour) }}),
			"other client": oidc.NewVerifier(valid.Issuer, static,
				&oidc.Config{ClientID: "client_other", SupportedSigningAlgs: []string{oidc.EdDSA}, Now: func() time.Time { return now }}),
			"other tenant": oidc.NewVerifier("https://id.example.com/oidc/globex", static,
				&oidc.Config{ClientID: valid.Audience, SupportedSigningAlgs: []string{oidc.EdDSA}, Now: func() time.Time { return now }}),
		} {
			_, err := v.Verify(ctx, token)
			assert.Error(t, err, name)
		}
	})
}

type countingSigner struct {
	Signer
	calls atomic.Int32
}

func (s *countingSigner) Sign(ctx context.Context, tenant string, payload []byte) (string, error) {
	s.calls.Add(1)
	return s.Signer.Sign(ctx, tenant, payload)
}

type failingSigner struct{ err error }

func (s failingSigner) Sign(context.Context, string, []byte) (string, error) { return "", s.err }
func (s failingSigner) Keys(context.Context, string) ([]PublicKey, error)    { return nil, s.err }

func TestJWKS(t *testing.T) {
	ctx := context.Background()

	t.Run("exact rendering", func(t *testing.T) {
		x, err := base64.RawURLEncoding.DecodeString("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
		require.NoError(t, err)
		got, err := jwksJSON([]PublicKey{{KID: "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k", Key: ed25519.PublicKey(x)}})
		require.NoError(t, err)
		assert.JSONEq(t, `{"keys":[{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","use":"sig",`+
			`"kid":"kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`, string(got))

		empty, err := jwksJSON(nil)
		require.NoError(t, err)
		assert.Equal(t, `{"keys":[]}`, string(empty))
	})

	t.Run("invalid keys", func(t *testing.T) {
		pub := make(ed25519.PublicKey, ed25519.PublicKeySize)
		for name, keys := range map[string][]PublicKey{
			"no kid":        {{Key: pub}},
			"duplicate kid": {{KID: "a", Key: pub}, {KID: "a", Key: pub}},
			"short key":     {{KID: "a", Key: pub[:31]}},
			"nil key":       {{KID: "a"}},
		} {
			_, err := jwksJSON(keys)
			assert.Error(t, err, name)
		}
	})

	t.Run("jwx parses it and verifies tokens of every published key", func(t *testing.T) {
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		ring, err := NewKeyRing(KeyRingConfig{Now: func() time.Time { return now }})
		require.NoError(t, err)
		var tokens []string
		for i := range 3 {
			if i > 0 {
				_, err := ring.Rotate(ctx)
				require.NoError(t, err)
			}
			tok, err := ring.Sign(ctx, "acme", []byte(`{"n":`+string(rune('0'+i))+`}`))
			require.NoError(t, err)
			tokens = append(tokens, tok)
		}
		keys, err := ring.Keys(ctx, "acme")
		require.NoError(t, err)
		body, err := jwksJSON(keys)
		require.NoError(t, err)

		set, err := jwk.Parse(body)
		require.NoError(t, err)
		require.Equal(t, 3, set.Len())
		for i := range set.Len() {
			k, _ := set.Key(i)
			assert.Equal(t, keys[i].KID, k.KeyID())
			assert.Equal(t, jwa.OKP, k.KeyType())
			assert.Equal(t, jwa.EdDSA.String(), k.Algorithm().String())
			assert.Equal(t, "sig", k.KeyUsage())
			isPrivate, err := jwk.IsPrivateKey(k)
			require.NoError(t, err)
			assert.False(t, isPrivate)
		}
		for _, tok := range tokens {
			_, err := jws.Verify([]byte(tok), jws.WithKeySet(set, jws.WithRequireKid(true)))
			assert.NoError(t, err)
		}
	})

	t.Run("go-oidc fetches it and follows a rotation", func(t *testing.T) {
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		// A rotation that signs at once, without publishing the key first: go-oidc meets an
		// unknown kid, and fetches the JWKS again.
		ring, err := NewKeyRing(KeyRingConfig{Now: func() time.Time { return now }, RotationDelay: -1})
		require.NoError(t, err)
		var fetches atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fetches.Add(1)
			keys, err := ring.Keys(r.Context(), "acme")
			if err == nil {
				var body []byte
				if body, err = jwksJSON(keys); err == nil {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write(body)
					return
				}
			}
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}))
		defer srv.Close()

		tok := IDToken{Issuer: "https://id.example.com/oidc/acme", Subject: "user_1", Audience: "client_1",
			IssuedAt: now, Expiry: now.Add(time.Hour), AuthTime: now, Nonce: "n"}
		v := oidc.NewVerifier(tok.Issuer, oidc.NewRemoteKeySet(ctx, srv.URL), &oidc.Config{
			ClientID: "client_1", SupportedSigningAlgs: []string{oidc.EdDSA}, Now: func() time.Time { return now },
		})
		before, err := mintIDToken(ctx, ring, "acme", &tok)
		require.NoError(t, err)
		_, err = v.Verify(ctx, before)
		require.NoError(t, err)

		_, err = ring.Rotate(ctx)
		require.NoError(t, err)
		after, err := mintIDToken(ctx, ring, "acme", &tok)
		require.NoError(t, err)
		// An unknown kid makes go-oidc fetch the JWKS again. go-oidc marks a fetch finished a
		// moment before it lets a new one start, so a verification right after the first one
		// may be answered from that first fetch: retry until go-oidc has fetched again.
		require.Eventually(t, func() bool {
			_, err = v.Verify(ctx, after)
			return err == nil
		}, 5*time.Second, 10*time.Millisecond, "an unknown kid makes go-oidc fetch the JWKS again: %v", err)
		_, err = v.Verify(ctx, before)
		require.NoError(t, err, "the retired key is still published")
		assert.GreaterOrEqual(t, fetches.Load(), int32(2))
	})
}
