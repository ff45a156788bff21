package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHomeOutsideDemo: outside demo mode the start page names no demo tenant and links to
// nothing that answers 404; it says how many tenants there are and where to begin, as the
// start message does.
func TestHomeOutsideDemo(t *testing.T) {
	db := newStore(t)
	s := startService(t, "-db", db, "-demo=false")
	base := s.vars["base_url"]
	get := func(target string) (int, string) {
		resp, err := http.Get(target)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	links := regexp.MustCompile(`href="([^"]+)"`)
	check := func(body string) {
		t.Helper()
		assert.NotContains(t, body, "Tenant demo")
		assert.NotContains(t, body, "/oidc/demo")
		assert.NotContains(t, body, "/scim/v2/demo")
		for _, m := range links.FindAllStringSubmatch(body, -1) {
			href := m[1]
			if strings.HasPrefix(href, "/") {
				href = base + href
			}
			if !strings.HasPrefix(href, base) {
				continue
			}
			code, _ := get(href)
			assert.Equal(t, http.StatusOK, code, "link %s", href)
		}
	}

	code, body := get(base + "/")
	require.Equal(t, http.StatusOK, code)
	check(body)
	assert.Contains(t, body, "no tenant yet")
	assert.Contains(t, body, "idp tenant create")

	runCmd(t, "tenant", "create", "acme", "--name", "Acme Corp", "-db", db)
	code, body = get(base + "/")
	require.Equal(t, http.StatusOK, code)
	check(body)
	assert.Contains(t, body, "1 tenant")
	assert.Contains(t, body, "idp tenant list")
	assert.NotContains(t, body, "acme", "the page names no tenant")
}

// TestFavicon: the service answers /favicon.ico, which browsers ask for on every page of an
// origin, with visid's icon, and the start page names it.
func TestFavicon(t *testing.T) {
	s := startService(t, "-demo=false")
	base := s.vars["base_url"]
	for _, p := range []string{"/favicon.ico", "/favicon.svg"} {
		resp, err := http.Get(base + p)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, p)
		assert.Equal(t, "image/svg+xml", resp.Header.Get("Content-Type"), p)
		assert.Contains(t, string(body), "<svg", p)
	}
	resp, err := http.Get(base + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(body), `<link rel="icon" href="/favicon.svg"`)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "img-src 'self'")
}
