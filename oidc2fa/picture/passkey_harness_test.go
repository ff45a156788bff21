package picture_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/passkeytest"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// newPasskeyEnv is newEnv for a tenant whose users may pass with a passkey, with the provider
// at http://localhost:PORT/oidc: the relying party ID is "localhost".
func newPasskeyEnv(t *testing.T, configure ...func(*picture.Config)) *env {
	t.Helper()
	return newEnvWith(t, envOptions{host: "localhost", secondFactor: store.SecondFactorPictureOrPasskey}, configure...)
}

// device is a person's passkey authenticator, with the browser around it, at the provider's
// origin.
func (e *env) device() *passkeytest.Authenticator { return passkeytest.New(e.base, "localhost") }

var passkeyFormTag = regexp.MustCompile(`<form id="passkey-form" method="post" action="([^"]+)" data-options="([^"]+)">`)

// offersPasskey reports whether the page offers a passkey.
func offersPasskey(p *page) bool { return passkeyFormTag.MatchString(p.body) }

var pictureFormTag = regexp.MustCompile(`<form id="(?:login|enroll)-form" class="picture-form" method="post" action="([^"]+)"`)

// passkeyURLs are where the page's passkey form asks for options and posts its answer; on a
// page that offers no passkey, where they would be.
func (e *env) passkeyURLs(pg *page) (options, action string) {
	e.t.Helper()
	if m := passkeyFormTag.FindStringSubmatch(pg.body); m != nil {
		return e.base + html.UnescapeString(m[2]), e.base + html.UnescapeString(m[1])
	}
	m := pictureFormTag.FindStringSubmatch(pg.body)
	require.NotNil(e.t, m, "a page with neither a passkey nor a picture:\n%s", pg.body)
	return e.base + html.UnescapeString(m[1]) + "/passkey/options", e.base + html.UnescapeString(m[1]) + "/passkey"
}

// passkeyOptions asks for a challenge as passkey.js does, and returns the options.
func (e *env) passkeyOptions(b *browser, pg *page) []byte {
	e.t.Helper()
	options, _ := e.passkeyURLs(pg)
	p := b.post(options, url.Values{"csrf": {pg.csrf(e.t)}})
	require.Equal(e.t, http.StatusOK, p.status, p.body)
	require.Equal(e.t, "application/json", p.header.Get("Content-Type"))
	return []byte(p.body)
}

// postPasskey posts credential as passkey.js's form does.
func (e *env) postPasskey(b *browser, pg *page, credential string) *page {
	e.t.Helper()
	_, action := e.passkeyURLs(pg)
	return b.post(action, url.Values{"csrf": {pg.csrf(e.t)}, "credential": {credential}})
}

// enrollPasskey adds a passkey of dev for user through an administrator's enrollment link.
func (e *env) enrollPasskey(dev *passkeytest.Authenticator, user string) *passkeytest.Credential {
	e.t.Helper()
	b, _, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: user})
	cred, err := dev.Create(e.passkeyOptions(b, pg))
	require.NoError(e.t, err)
	done := e.postPasskey(b, pg, cred)
	require.Equal(e.t, http.StatusOK, done.status, done.body)
	require.Contains(e.t, done.body, "Passkey ready")
	creds := dev.Credentials()
	return creds[len(creds)-1]
}

// passkeySignIn signs in as hint with dev's passkey (c, or the one dev picks) from a fresh
// browser and returns the answer to the passkey's POST.
func (e *env) passkeySignIn(dev *passkeytest.Authenticator, c *passkeytest.Credential, hint string) *page {
	e.t.Helper()
	b := e.browser()
	_, pg := e.login(b, hint)
	cred, err := dev.GetWith(e.passkeyOptions(b, pg), c)
	require.NoError(e.t, err)
	return e.postPasskey(b, pg, cred)
}

// openClientEnrollment opens, in a fresh browser, the link the client's backend asked for hint
// (no proof of a recent sign-in: it may set up a first factor only), and returns the
// enrollment page's URL and page.
func (e *env) openClientEnrollment(hint string) (*browser, string, *page) {
	e.t.Helper()
	status, body := e.enrollByClient(hint)
	require.Equal(e.t, http.StatusOK, status, "%v", body)
	link, _ := body["enrollment_url"].(string)
	b := e.browser()
	p := b.post(link, url.Values{})
	require.Equal(e.t, http.StatusSeeOther, p.status, p.body)
	enrollURL := p.location
	pg := b.get(enrollURL)
	require.Equal(e.t, http.StatusOK, pg.status, pg.body)
	return b, enrollURL, pg
}

// idToken redeems code at the token endpoint and returns the ID token's claims.
func (e *env) idToken(code string) map[string]any {
	e.t.Helper()
	resp, err := http.PostForm(e.srv.URL+"/oidc/token/acme", url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect},
		"code_verifier": {"verifier-verifier-verifier-verifier-verifier"},
		"client_id":     {e.clientID}, "client_secret": {e.secret},
	})
	require.NoError(e.t, err)
	defer resp.Body.Close()
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	var body struct {
		IDToken string `json:"id_token"`
	}
	require.NoError(e.t, json.NewDecoder(resp.Body).Decode(&body))
	parts := strings.Split(body.IDToken, ".")
	require.Len(e.t, parts, 3)
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(e.t, err)
	var claims map[string]any
	require.NoError(e.t, json.Unmarshal(payload, &claims))
	return claims
}

// slowFailure is a credential store whose AddFailure takes a while, so that attempts sent at
// once overlap as they would with a real store over the network.
type slowFailure struct{ store.PictureCredentials }

func (s slowFailure) AddFailure(ctx context.Context, tenant, userID, network string, at time.Time) (store.FailureCounts, error) {
	time.Sleep(20 * time.Millisecond)
	return s.PictureCredentials.AddFailure(ctx, tenant, userID, network, at)
}

// storeCalls records the calls of the picture login to its stores, by method.
type storeCalls struct {
	mu    sync.Mutex
	calls []string
}

func (s *storeCalls) add(name string) { s.mu.Lock(); s.calls = append(s.calls, name); s.mu.Unlock() }

// take returns the calls since the last take.
func (s *storeCalls) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

type recordedPictures struct {
	store.PictureCredentials
	rec *storeCalls
}

func (r recordedPictures) Get(ctx context.Context, tenant, userID string) (*store.PictureCredential, error) {
	r.rec.add("Pictures.Get")
	return r.PictureCredentials.Get(ctx, tenant, userID)
}

func (r recordedPictures) AddFailure(ctx context.Context, tenant, userID, network string, at time.Time) (store.FailureCounts, error) {
	r.rec.add("Pictures.AddFailure")
	return r.PictureCredentials.AddFailure(ctx, tenant, userID, network, at)
}

func (r recordedPictures) NetworkFailures(ctx context.Context, tenant, userID, network string) (store.NetworkFailures, error) {
	r.rec.add("Pictures.NetworkFailures")
	return r.PictureCredentials.NetworkFailures(ctx, tenant, userID, network)
}

func (r recordedPictures) FamiliarNetworks(ctx context.Context, tenant, userID string) ([]store.FamiliarNetwork, error) {
	r.rec.add("Pictures.FamiliarNetworks")
	return r.PictureCredentials.FamiliarNetworks(ctx, tenant, userID)
}

type recordedPasskeys struct {
	store.Passkeys
	rec *storeCalls
}

func (r recordedPasskeys) Get(ctx context.Context, tenant string, id []byte) (*store.Passkey, error) {
	r.rec.add("Passkeys.Get")
	return r.Passkeys.Get(ctx, tenant, id)
}

func (r recordedPasskeys) List(ctx context.Context, tenant, userID string) ([]store.Passkey, error) {
	r.rec.add("Passkeys.List")
	return r.Passkeys.List(ctx, tenant, userID)
}
