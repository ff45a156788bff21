package picture_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
)

// pushedSignIn runs one sign-in of hint that the client pushed (RFC 9126), with the points of
// each attempt in turn, and returns the query the client gets.
func (e *env) pushedSignIn(hint string, attempts ...string) url.Values {
	e.t.Helper()
	sum := sha256.Sum256([]byte("verifier-verifier-verifier-verifier-verifier"))
	form := url.Values{
		"response_type": {"code"}, "client_id": {e.clientID}, "client_secret": {e.secret}, "redirect_uri": {testRedirect},
		"scope": {"openid 2fa"}, "state": {"st"}, "nonce": {"n"}, "login_hint": {hint},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	resp, err := http.Post(e.srv.URL+"/oidc/par/acme", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	require.NoError(e.t, err)
	defer resp.Body.Close()
	require.Equal(e.t, http.StatusCreated, resp.StatusCode)
	var pushed struct {
		RequestURI string `json:"request_uri"`
	}
	require.NoError(e.t, json.NewDecoder(resp.Body).Decode(&pushed))
	b := e.browser()
	p := b.get(e.base + "/oidc/authorize/acme?" + url.Values{"client_id": {e.clientID}, "request_uri": {pushed.RequestURI}}.Encode())
	require.Equal(e.t, http.StatusSeeOther, p.status, p.body)
	loginURL := p.location
	pg := b.get(loginURL)
	for i, pts := range attempts {
		p := e.attempt(b, loginURL, pg, pts)
		if p.location != loginURL {
			require.Equal(e.t, len(attempts)-1, i, "the flow ended after attempt %d of %d", i+1, len(attempts))
			return toClient(e.t, p)
		}
		pg = b.get(loginURL)
	}
	return nil
}

// TestLockToldOnlyToPushingClients: a sign-in that ends on a lock tells a client that must push
// every sign-in that the factor is locked and until when (its backend started the sign-in after
// its own first factor), and tells any other client access_denied alone, as for a wrong
// picture, since anyone can start its sign-ins with any login hint and only enrolled users
// lock.
func TestLockToldOnlyToPushingClients(t *testing.T) {
	e, clk := clockedEnv(t)
	e.ocfg.Pushed = e.b.Pushed
	h, err := oidc2fa.New(e.ocfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/oidc/", http.StripPrefix("/oidc", h))
	e.srv.Config.Handler = mux
	t0 := clk.Now()

	// A client that may start sign-ins from the browser: the lock is not told.
	q := e.signIn("ann", repeat(wrong, 5)...)
	assert.Equal(t, "access_denied", q.Get("error"))
	assert.False(t, q.Has("locked_until"))
	assert.Equal(t, "the user did not pass the second factor", q.Get("error_description"))
	// An unknown user's sign-in looks the same.
	unknown := e.signIn("nobody", repeat(wrong, 5)...)
	assert.Equal(t, q, unknown)

	_, err = oidc2fa.SetRequirePAR(context.Background(), e.b.Clients, "acme", e.clientID, true)
	require.NoError(t, err)
	// Locked now: the pushing client hears it, and until when (the lock of the network, which
	// the sixth failure doubled to two minutes, from the last failure).
	q = e.pushedSignIn("ann", repeat(right, 5)...)
	assert.Equal(t, "access_denied", q.Get("error"))
	assert.Equal(t, "the second factor is locked after too many failures", q.Get("error_description"))
	until, err := time.Parse(time.RFC3339, q.Get("locked_until"))
	require.NoError(t, err, "locked_until %q", q.Get("locked_until"))
	assert.Equal(t, e.lockedUntil(t).UTC().Truncate(time.Second), until)
	assert.True(t, until.After(t0), "until %v", until)
	// An unknown user's sign-in never locks: access_denied alone, even to a pushing client.
	q = e.pushedSignIn("nobody", repeat(wrong, 5)...)
	assert.False(t, q.Has("locked_until"))
	assert.Equal(t, "the user did not pass the second factor", q.Get("error_description"))
}
