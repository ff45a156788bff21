package oidc2fa_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// BenchmarkTokenExchange measures the whole token endpoint — form parsing, client
// authentication, the atomic consumption of the code, PKCE, minting and signing the ID token —
// against a bare handler that does one raw Ed25519 signature over an input of the ID token's
// size and writes a JSON answer of the same size. Both run in process through ServeHTTP with the
// same request bodies; the codes are stored before the timer starts.
//
// Target: full reaches at least 0.6 of bare's throughput (bare ns/op ÷ full ns/op ≥ 0.6).
func BenchmarkTokenExchange(b *testing.B) {
	e := newEnv(b, func(c *oidc2fa.Config) { c.Logger = slog.New(slog.DiscardHandler) })
	ctx := context.Background()

	// bodies returns n token requests for codes stored now, each used once.
	seq := 0
	bodies := func(b *testing.B, n int) []string {
		out := make([]string, n)
		now := e.clock.Now()
		for i := range out {
			seq++
			code := "bench-" + strconv.Itoa(seq) + "-" + randomCode()
			require.NoError(b, e.mem.Backend().Codes.Create(ctx, store.Code{
				Hash: sha256.Sum256([]byte(code)), Tenant: "acme", ClientID: e.client.ID, RedirectURI: testRedirect,
				Challenge: testChallenge(), Nonce: "n-456", Subject: e.user.ID, AuthTime: now,
				AMR: []string{"test"}, Expires: now.Add(time.Hour),
			}))
			out[i] = e.tokenForm(code).Encode()
		}
		return out
	}
	run := func(b *testing.B, h http.Handler, forms []string) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			req := httptest.NewRequest("POST", "/token/acme", strings.NewReader(forms[i]))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
		b.StopTimer()
	}

	b.Run("full", func(b *testing.B) {
		forms := bodies(b, b.N)
		run(b, e.handler, forms)
		// Keep the store small between rounds.
		e.clock.Advance(2 * time.Hour)
		_, err := e.mem.Backend().Codes.DeleteExpired(ctx, e.clock.Now())
		require.NoError(b, err)
	})

	b.Run("bare", func(b *testing.B) {
		bare := bareTokenHandler(b, e)
		forms := make([]string, b.N)
		for i := range forms {
			forms[i] = e.tokenForm("bench-" + randomCode()).Encode() // the same size as full's
		}
		run(b, bare, forms)
	})
}

// bareTokenHandler is BenchmarkTokenExchange's baseline: a handler that does one raw Ed25519
// signature over an input of the size of e's ID tokens and writes a JSON answer of the size of
// e's token responses, with the same headers.
func bareTokenHandler(b *testing.B, e *env) http.Handler {
	b.Helper()
	sample := e.postToken(e.tokenForm(e.code()), nil)
	require.Equal(b, http.StatusOK, sample.Code, "body: %s", sample.Body)
	var resp struct {
		IDToken string `json:"id_token"`
	}
	require.NoError(b, json.Unmarshal(sample.Body.Bytes(), &resp))
	signingInput := []byte(resp.IDToken[:strings.LastIndexByte(resp.IDToken, '.')])
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(b, err)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sig := ed25519.Sign(priv, signingInput)
		body := make([]byte, 0, sample.Body.Len())
		body = append(body, `{"id_token":"`...)
		body = append(body, signingInput...)
		body = append(body, '.')
		body = base64.RawURLEncoding.AppendEncode(body, sig)
		body = append(body, `","token_type":"Bearer","expires_in":3600}`...)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Pragma", "no-cache")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	// Check once that the bare answer is the size of the real one.
	rec := httptest.NewRecorder()
	bare.ServeHTTP(rec, httptest.NewRequest("POST", "/token/acme", nil))
	require.Equal(b, sample.Body.Len(), rec.Body.Len())
	return bare
}

// BenchmarkPushedAuthorization measures a pushed authorization request (RFC 9126) through the
// whole handler — form parsing, client authentication, the authorization request's checks, a
// fresh request_uri and its hash stored — against BenchmarkTokenExchange's bare baseline (one
// raw Ed25519 signature and a JSON answer of a token response's size).
//
// Target: full reaches at least 0.6 of bare's throughput (bare ns/op ÷ full ns/op ≥ 0.6).
func BenchmarkPushedAuthorization(b *testing.B) {
	e := newEnv(b, func(c *oidc2fa.Config) { c.Logger = slog.New(slog.DiscardHandler) })
	ctx := context.Background()
	form := e.pushParams().Encode()

	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest("POST", "/par/acme", strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
		b.StopTimer()
		// Keep the store small between rounds.
		e.clock.Advance(time.Hour)
		_, err := e.mem.Backend().Pushed.DeleteExpired(ctx, e.clock.Now())
		require.NoError(b, err)
	})

	b.Run("bare", func(b *testing.B) {
		bare := bareTokenHandler(b, e)
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest("POST", "/token/acme", strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			bare.ServeHTTP(rec, req)
		}
	})
}

// randomCode is a code like the provider's: 32 random bytes, base64url.
func randomCode() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}
