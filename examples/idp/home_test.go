package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartPage: / shows where the demo tenant's discovery document and SCIM API are, as URLs
// that work; other paths are still 404.
func TestStartPage(t *testing.T) {
	s := startService(t)
	base := strings.TrimSuffix(s.vars["scim_base_url"], "/scim/v2/demo")
	get := func(target string) (*http.Response, string) {
		resp, err := http.Get(target)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}

	resp, body := get(base + "/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	discovery := s.vars["issuer"] + "/.well-known/openid-configuration"
	for _, want := range []string{
		"<title>visid identity service</title>",
		`<a href="` + discovery + `">`,
		"<code>" + s.vars["scim_base_url"] + "</code>",
		"<code>" + s.vars["issuer"] + "</code>",
		"idp tenant list",
	} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, s.vars["scim_api_key"], "no secret")
	assert.NotContains(t, body, s.vars["client_secret"], "no secret")

	resp, body = get(discovery)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the discovery link works")
	assert.Contains(t, body, `"issuer":"`+s.vars["issuer"]+`"`)

	resp, _ = get(base + "/nothing-here")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	req, err := http.NewRequest("POST", base+"/", nil)
	require.NoError(t, err)
	presp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	presp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, presp.StatusCode)
}
