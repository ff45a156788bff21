package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoSecretPathInLogs: the paths that carry a secret — an enrollment link's one-time token, a
// login's or an enrollment's interaction id — reach no log line at any level, the access log
// included, when a person uses every such route (and when a client sends wrong ones).
func TestNoSecretPathInLogs(t *testing.T) {
	logs := &syncBuffer{}
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	s := startServiceLogging(t, logs, "-db", db, "-log-level", "debug", "-access-log-delay", "0")
	base := strings.TrimSuffix(s.vars["issuer"], "/oidc/demo")

	// A sign-in: /oidc/login/demo/{id}, GET and POST.
	signInAlice(t, s.vars)

	// An enrollment link: /oidc/enroll/demo/{token}, then /oidc/enrollment/demo/{id}/….
	link := runCmd(t, "enroll-link", "--tenant", "demo", "--user", "alice", "-base-url", base, "-db", db)["enrollment_url"]
	require.NotEmpty(t, link)
	token := link[strings.LastIndex(link, "/")+1:]
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(link)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`).FindAllSubmatch(page, -1) {
		form.Set(string(m[1]), string(m[2]))
	}
	resp, err = browser.PostForm(link, form)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	next, err := resp.Location()
	require.NoError(t, err)
	require.Contains(t, next.Path, "/oidc/enrollment/demo/")
	resp, err = browser.Get(next.String())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// Wrong ones, which the provider refuses (and logs at Debug).
	for _, p := range []string{"/oidc/enroll/demo/not-a-token-0123456789", "/oidc/login/demo/not-an-id-0123456789",
		"/oidc/enrollment/demo/not-an-id-0123456789/next"} {
		resp, err := http.Get(base + p)
		require.NoError(t, err)
		resp.Body.Close()
	}

	out := logs.String()
	require.Contains(t, out, "path=/oidc/enroll/demo/…", "the access log names the route")
	require.Contains(t, out, "path=/oidc/login/demo/…")
	require.Contains(t, out, "path=/oidc/enrollment/demo/…")
	assert.NotContains(t, out, token, "the enrollment token")
	assert.NotContains(t, out, "not-a-token-0123456789")
	assert.NotContains(t, out, "not-an-id-0123456789")
	leak := regexp.MustCompile(`/(login|enrollment|enroll)/demo/[^…/\s"]+`).FindAllString(out, -1)
	assert.Empty(t, leak, "a path with a secret in the log")
	assert.NotContains(t, out, strings.TrimPrefix(next.Path, "/oidc/enrollment/demo/"), "an enrollment's interaction id")
}
