package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serviceEnv returns the environment variable that names a test service. Without it the test
// is skipped, or fails under VISID_REQUIRE_SERVICES=1.
func serviceEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s is not set, and VISID_REQUIRE_SERVICES=1", name)
		}
		t.Skipf("%s is not set", name)
	}
	return v
}

// postgresSchema makes a schema of its own for the test in the database dsn names, dropped
// when the test ends, and returns a DSN whose connections use it.
func postgresSchema(t *testing.T, dsn string) string {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	schema := "idp_test_" + strings.ToLower(rand.Text()[:12])
	_, err = db.ExecContext(t.Context(), "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := db.Exec("DROP SCHEMA " + schema + " CASCADE")
		assert.NoError(t, err)
	})
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// loadBalancer stands in front of several instances of the service: it sends every request
// to the instance the test points it at, keeping the Host the client used.
type loadBalancer struct {
	*httptest.Server
	to atomic.Pointer[process]
}

func newLoadBalancer(t *testing.T) *loadBalancer {
	lb := &loadBalancer{}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: "http", Host: lb.to.Load().addr})
		r.Out.Host = r.In.Host
	}}
	lb.Server = httptest.NewServer(proxy)
	t.Cleanup(lb.Close)
	return lb
}

// TestManyInstances runs two instances of the service, as separate processes behind one URL,
// on one PostgreSQL database and one Redis, and shows that they act as one service: the SCIM
// rate limit is counted once for both, what one writes the other reads at once, a code issued
// by one is redeemed once through the other, and failed picture logins on both add up to one
// lockout.
func TestManyInstances(t *testing.T) {
	dsn := postgresSchema(t, serviceEnv(t, "VISID_TEST_POSTGRES_DSN"))
	redisAddr := serviceEnv(t, "VISID_TEST_REDIS_ADDR")
	bin := buildIDP(t)
	lb := newLoadBalancer(t)
	env := []string{kekEnv + "=" + base64.StdEncoding.EncodeToString([]byte(rand.Text() + rand.Text())[:32])}
	args := []string{"-addr", "127.0.0.1:0", "-base-url", lb.URL, "-db", dsn, "-redis", "redis://" + redisAddr + "/0", "-demo"}
	a := startProcess(t, bin, t.TempDir(), env, args...)
	b := startProcess(t, bin, t.TempDir(), env, args...)
	require.Contains(t, a.vars, "scim_api_key", "the first instance made the demo")
	assert.Equal(t, []string{"tenant", "scim_base_url", "issuer"}, keysOf(b.lines), "the second found it")
	scimPath := strings.TrimPrefix(a.vars["scim_base_url"], lb.URL)
	scimURL := func(p *process, rest string) string { return "http://" + p.addr + scimPath + rest }

	t.Run("a user created through one instance is listed through the other", func(t *testing.T) {
		key := a.vars["scim_api_key"]
		resp, created := scimRequest(t, "POST", scimURL(a, "/Users"), key,
			`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"bob@example.com","active":true}`)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%v", created)
		resp, list := scimRequest(t, "GET", scimURL(b, "/Users?filter="+url.QueryEscape(`userName eq "BOB@example.com"`)), key, "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%v", list)
		assert.EqualValues(t, 1, list["totalResults"])
		require.Len(t, list["Resources"], 1)
		assert.Equal(t, created["id"], list["Resources"].([]any)[0].(map[string]any)["id"])
	})

	t.Run("300 requests of one key over both instances", func(t *testing.T) {
		// A fresh key, made by the admin command on the shared database, so that the budget
		// is whole.
		cmd := exec.CommandContext(t.Context(), bin, "apikey", "create", "--tenant", demoTenant, "-db", dsn)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		_, vars, err := readVars(bufio.NewReader(bytes.NewReader(append(out, '\n'))))
		require.NoError(t, err)
		key := vars["scim_api_key"]
		require.NotEmpty(t, key, "%s", out)

		const total, workers = 300, 16
		var next atomic.Int32
		var mu sync.Mutex
		codes := map[int]int{}
		byInstance := map[string]map[int]int{a.addr: {}, b.addr: {}}
		var wg sync.WaitGroup
		start := time.Now()
		for range workers {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > total {
						return
					}
					p := []*process{a, b}[i%2]
					status := scimStatus(t, scimURL(p, "/ServiceProviderConfig"), key)
					mu.Lock()
					codes[status]++
					byInstance[p.addr][status]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		t.Logf("by status: %v; by instance: %v", codes, byInstance)
		assert.Equal(t, total, codes[http.StatusOK]+codes[http.StatusTooManyRequests], "only 200 and 429: %v", codes)
		assertWithinLimit(t, codes[http.StatusOK], elapsed)
		for addr, c := range byInstance {
			assert.Positive(t, c[http.StatusOK], "%s answered some", addr)
			assert.Positive(t, c[http.StatusTooManyRequests], "%s refused some", addr)
		}
		// Each instance on its own would have let 200 through: 400 in all, or 300 here.
		assert.Less(t, codes[http.StatusOK], total)
	})

	login := newPictureLogin(t, a.vars)
	t.Run("a code issued through one instance is redeemed once, through the other", func(t *testing.T) {
		lb.to.Store(a)
		f := login.start(t)
		resp := f.post(t, demoPointsValue())
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		callback, err := resp.Location()
		require.NoError(t, err)
		require.Equal(t, "127.0.0.1:8081", callback.Host, "back to the client: %s", callback)
		code := callback.Query().Get("code")
		require.NotEmpty(t, code, "%s", callback)

		lb.to.Store(b)
		status, body := login.redeem(t, code, f.verifier)
		require.Equal(t, http.StatusOK, status, "%v", body)
		idToken, _ := body["id_token"].(string)
		require.NotEmpty(t, idToken)

		lb.to.Store(a) // the other instance publishes the key that signed it
		provider, err := oidc.NewProvider(t.Context(), a.vars["issuer"])
		require.NoError(t, err)
		tok, err := provider.Verifier(&oidc.Config{ClientID: a.vars["client_id"]}).Verify(t.Context(), idToken)
		require.NoError(t, err)
		var claims struct {
			Nonce string `json:"nonce"`
		}
		require.NoError(t, tok.Claims(&claims))
		assert.Equal(t, f.nonce, claims.Nonce)

		status, body = login.redeem(t, code, f.verifier)
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "invalid_grant", body["error"], "a replay through the first instance: %v", body)
	})

	t.Run("signing keys are per tenant, the same on both instances, rotated per tenant", func(t *testing.T) {
		admin := func(args ...string) map[string]string {
			t.Helper()
			cmd := exec.CommandContext(t.Context(), bin, append(args, "-db", dsn)...)
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.Output()
			require.NoError(t, err, "%v: %s", args, out)
			_, vars, err := readVars(bufio.NewReader(bytes.NewReader(append(out, '\n'))))
			require.NoError(t, err)
			return vars
		}
		jwks := func(p *process, tenant string) []string {
			t.Helper()
			resp, err := http.Get("http://" + p.addr + "/oidc/jwks/" + tenant)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var set struct{ Keys []struct{ KID string } }
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&set))
			var kids []string
			for _, k := range set.Keys {
				kids = append(kids, k.KID)
			}
			return kids
		}
		admin("tenant", "create", "globex")
		demoKIDs, globexKIDs := jwks(a, demoTenant), jwks(b, "globex")
		require.NotEmpty(t, demoKIDs)
		require.NotEmpty(t, globexKIDs)
		assert.Equal(t, demoKIDs, jwks(b, demoTenant), "both instances publish the same keys")
		assert.Equal(t, globexKIDs, jwks(a, "globex"), "a key one instance made is published by the other at once")
		for _, kid := range demoKIDs {
			assert.NotContains(t, globexKIDs, kid, "a tenant's JWKS lists its keys alone")
		}

		rotated := admin("key", "rotate", "--tenant", demoTenant)
		newKID := rotated["new_kid"]
		require.NotEmpty(t, newKID)
		for _, p := range []*process{a, b} {
			require.Eventually(t, func() bool { return slices.Contains(jwks(p, demoTenant), newKID) }, 5*time.Second,
				100*time.Millisecond, "the new key is published within a second")
			kids := jwks(p, demoTenant)
			assert.Equal(t, demoKIDs[0], kids[0], "the old key signs until the rotation delay has passed")
			assert.Subset(t, kids, demoKIDs, "the old keys stay published")
			assert.Equal(t, globexKIDs, jwks(p, "globex"), "another tenant's keys do not change")
		}
	})

	t.Run("five wrong pictures over both instances lock the user", func(t *testing.T) {
		wrong := "10,10;990,10;10,740;990,740;500,375"
		// Three failures in one login, on alternate instances...
		f := login.start(t)
		for i, p := range []*process{a, b, a} {
			lb.to.Store(p)
			resp := f.post(t, wrong)
			require.Equal(t, http.StatusSeeOther, resp.StatusCode)
			require.Equal(t, f.page.Path, mustLocation(t, resp).Path, "failure %d: the page again", i+1)
		}
		// ...and two in another: the fifth locks, though this login saw only two. The login goes
		// on (every sign-in gets five attempts, so its length tells nothing about the count).
		lb.to.Store(b)
		f = login.start(t)
		resp := f.post(t, wrong)
		require.Equal(t, f.page.Path, mustLocation(t, resp).Path, "failure 4: the page again")
		lb.to.Store(a)
		resp = f.post(t, wrong)
		require.Equal(t, f.page.Path, mustLocation(t, resp).Path, "failure 5: the page again")
		assert.Contains(t, a.stderr.String(), "picture login locked after too many failures")

		// Now even the right points fail, on either instance.
		for _, p := range []*process{b, a} {
			lb.to.Store(p)
			f = login.start(t)
			resp = f.post(t, demoPointsValue())
			assert.Equal(t, f.page.Path, mustLocation(t, resp).Path, "no code for a locked user")
			assert.Contains(t, p.stderr.String(), "reason=locked")
		}
	})
}

// scimStatus makes a GET with key and returns the status; it may run on any goroutine.
func scimStatus(t *testing.T, u, key string) int {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", u, err)
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func mustLocation(t *testing.T, resp *http.Response) *url.URL {
	t.Helper()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	u, err := resp.Location()
	require.NoError(t, err)
	return u
}

// demoPointsValue is alice's points as the login form posts them.
func demoPointsValue() string {
	s := make([]string, len(demoPoints))
	for i, p := range demoPoints {
		s[i] = fmt.Sprintf("%d,%d", p.X, p.Y)
	}
	return strings.Join(s, ";")
}

// pictureLogin plays the demo client and alice's browser, by hand, so that each request can
// go to the instance the test chooses.
type pictureLogin struct {
	issuer, clientID, secret string
	browser                  *http.Client
	discovery                struct {
		Authorization string `json:"authorization_endpoint"`
		Token         string `json:"token_endpoint"`
	}
}

// newPictureLogin plays the demo client whose issuer, client_id and client_secret are in
// vars, as the service printed them on its first start.
func newPictureLogin(t *testing.T, vars map[string]string) *pictureLogin {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &pictureLogin{issuer: vars["issuer"], clientID: vars["client_id"], secret: vars["client_secret"],
		browser: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// flow is one login of alice, up to her picture's page.
type flow struct {
	l               *pictureLogin
	page            *url.URL
	verifier, nonce string
	csrf            string
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// start sends alice's browser to the authorization endpoint, as the demo client, and opens
// the page it is sent to.
func (l *pictureLogin) start(t *testing.T) *flow {
	t.Helper()
	if l.discovery.Token == "" {
		resp, err := http.Get(l.issuer + "/.well-known/openid-configuration")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&l.discovery))
	}
	f := &flow{l: l, verifier: rand.Text() + rand.Text(), nonce: rand.Text()}
	challenge := sha256.Sum256([]byte(f.verifier))
	q := url.Values{
		"response_type": {"code"}, "client_id": {l.clientID}, "redirect_uri": {demoRedirect},
		"scope": {"openid 2fa"}, "state": {rand.Text()}, "nonce": {f.nonce}, "login_hint": {demoEmail},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(challenge[:])}, "code_challenge_method": {"S256"},
	}
	resp, err := l.browser.Get(l.discovery.Authorization + "?" + q.Encode())
	require.NoError(t, err)
	resp.Body.Close()
	f.page = mustLocation(t, resp)
	return f
}

// post opens the picture page (for its CSRF token) and posts points from it.
func (f *flow) post(t *testing.T, points string) *http.Response {
	t.Helper()
	resp, err := f.l.browser.Get(f.page.String())
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
	m := csrfRE.FindSubmatch(page)
	require.NotNil(t, m, "%s", page)
	resp, err = f.l.browser.PostForm(f.page.String(), url.Values{"csrf": {string(m[1])}, "points": {points}})
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// redeem exchanges code at the token endpoint as the demo client and returns the status and
// the JSON answer.
func (l *pictureLogin) redeem(t *testing.T, code, verifier string) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {demoRedirect},
		"code_verifier": {verifier}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, l.discovery.Token, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(l.clientID), url.QueryEscape(l.secret))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}
