package oidc2fa_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlowInProcess(t *testing.T) {
	e := newEnv(t)
	q := callback(t, e.browser().follow("GET", "/authorize/acme?"+e.authParams().Encode(), nil))
	assert.Equal(t, "st-123", q.Get("state"))
	assert.Equal(t, testBase+"/acme", q.Get("iss"))
	rec := e.postToken(e.tokenForm(q.Get("code")), nil)
	require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.Equal(t, "no-cache", rec.Header().Get("Pragma"))
	var resp map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	assert.Equal(t, "Bearer", resp["token_type"])
	assert.EqualValues(t, 3600, resp["expires_in"])
	assert.NotContains(t, resp, "access_token")
	assert.NotContains(t, resp, "refresh_token")

	jw := httpGet(t, e.handler, "/jwks/acme")
	set, err := jwk.Parse(jw)
	require.NoError(t, err)
	tok, err := jwt.Parse([]byte(resp["id_token"].(string)), jwt.WithKeySet(set), jwt.WithClock(jwt.ClockFunc(e.clock.Now)),
		jwt.WithIssuer(testBase+"/acme"), jwt.WithAudience(e.client.ID))
	require.NoError(t, err)
	assert.Equal(t, e.user.ID, tok.Subject())
	nonce, _ := tok.Get("nonce")
	assert.Equal(t, "n-456", nonce)
	_ = context.Background()
}

func httpGet(t *testing.T, h http.Handler, path string) []byte {
	t.Helper()
	rec := httpRecord(h, "GET", path)
	require.Equal(t, http.StatusOK, rec.Code, "GET %s: %s", path, rec.Body)
	return rec.Body.Bytes()
}
