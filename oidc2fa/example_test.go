package oidc2fa_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// A complete host: in-memory stores, a tenant with a user whose picture password is seeded with
// picture.Authenticator.Enroll, a registered client, and the provider with the picture login
// mounted under /oidc on the host's own mux. The example then plays the relying application
// and the browser: it reads the tenant's discovery document and JWKS, starts ann's sign-in,
// posts her five points to the picture login page and redeems the code for an ID token.
func ExampleNew() {
	ctx := context.Background()

	// b holds every store the provider and the picture login need. memstore keeps them in
	// memory; store/sqlstore keeps them in SQLite or PostgreSQL (docs/production.md).
	b := memstore.New().Backend()
	if err := b.Tenants.Create(ctx, store.Tenant{ID: "acme", DisplayName: "Acme Corp"}); err != nil {
		fmt.Println(err)
		return
	}
	ann, err := b.Users.Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true})
	if err != nil {
		fmt.Println(err)
		return
	}

	// pepperKey keys the picture passwords' hashes and cookieKey the login pages' cookies: 32
	// secret bytes each, the same on every instance, kept outside the store (examples/idp
	// derives both from its key-encryption key).
	pepperKey, cookieKey := make([]byte, 32), make([]byte, 32)
	_, _ = rand.Read(pepperKey)
	_, _ = rand.Read(cookieKey)

	// authenticator is the second factor: the picture login.
	authenticator, err := picture.New(picture.Config{
		Credentials: b.Pictures,
		Peppers:     []picture.Pepper{{ID: "2026-11", Key: pepperKey}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Seed ann's picture password: five points on the built-in harbour, in its 1000 × 750
	// space. People set up their own through the enrollment pages.
	points := []picture.Point{{X: 700, Y: 78}, {X: 100, Y: 158}, {X: 420, Y: 495}, {X: 900, Y: 515}, {X: 265, Y: 700}}
	if err := authenticator.Enroll(ctx, "acme", ann.ID, "harbour", points); err != nil {
		fmt.Println(err)
		return
	}

	// The host's own mux, served here by httptest; a real host uses its http.Server and its
	// public URL.
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// The relying application's client; its secret is shown this once (only a hash is stored).
	clientSecret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant:       "acme",
		Name:         "Acme app",
		RedirectURIs: []string{"http://127.0.0.1:8081/callback"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{}) // signing keys per tenant
	if err != nil {
		fmt.Println(err)
		return
	}
	provider, err := oidc2fa.New(oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Pushed:        b.Pushed,
		Events:        b.Events,
		Authenticator: authenticator,
		Signer:        keys,
		BaseURL:       srv.URL + "/oidc",
		CookieKey:     cookieKey,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux.Handle("/oidc/", http.StripPrefix("/oidc", provider))

	// What a relying party reads first: the tenant's discovery document.
	var discovery struct {
		Issuer                string   `json:"issuer"`
		AuthorizationEndpoint string   `json:"authorization_endpoint"`
		JWKSURI               string   `json:"jwks_uri"`
		Algorithms            []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := getJSON(srv.URL+"/oidc/acme/.well-known/openid-configuration", &discovery); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("issuer:", strings.TrimPrefix(discovery.Issuer, srv.URL))
	fmt.Println("algorithms:", discovery.Algorithms)
	var jwks struct {
		Keys []struct {
			Kty string `json:"kty"`
			Crv string `json:"crv"`
		} `json:"keys"`
	}
	if err := getJSON(discovery.JWKSURI, &jwks); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("signing keys:", len(jwks.Keys), jwks.Keys[0].Kty, jwks.Keys[0].Crv)

	// After checking ann's password, the application sends her browser to the authorization
	// endpoint (oidc2fa/rp builds this URL, state, nonce and PKCE included).
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {client.ID},
		"redirect_uri":          {"http://127.0.0.1:8081/callback"},
		"scope":                 {"openid 2fa"},
		"state":                 {"state-1"},
		"nonce":                 {"nonce-1"},
		"code_challenge":        {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"},
		"code_challenge_method": {"S256"},
		"login_hint":            {"ann@example.com"},
	}
	// The browser keeps cookies (the login pages bind the sign-in to it) and follows redirects
	// within the identity service, but stops at the one back to the application.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if "http://"+r.URL.Host != srv.URL {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := browser.Get(discovery.AuthorizationEndpoint + "?" + q.Encode())
	if err != nil {
		fmt.Println(err)
		return
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println("login page:", resp.StatusCode, strings.Contains(string(page), `alt="Your picture: Harbour"`))

	// Ann clicks her five points on the picture; the page posts them in the picture's space.
	action := regexp.MustCompile(`id="login-form"[^>]* action="([^"]+)"`).FindSubmatch(page)
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if action == nil || csrf == nil {
		fmt.Println("no login form")
		return
	}
	resp, err = browser.PostForm(srv.URL+string(action[1]), url.Values{
		"csrf":   {string(csrf[1])},
		"points": {"700,78;100,158;420,495;900,515;265,700"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("back to:", back.Host+back.Path, "state:", back.Query().Get("state"))

	// The application's backend redeems the code with its secret and the PKCE verifier.
	resp, err = http.PostForm(srv.URL+"/oidc/token/acme", url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {back.Query().Get("code")},
		"redirect_uri":  {"http://127.0.0.1:8081/callback"},
		"client_id":     {client.ID},
		"client_secret": {clientSecret},
		"code_verifier": {"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var token struct {
		IDToken string `json:"id_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&token); err != nil {
		fmt.Println(resp.Status, err)
		return
	}
	// oidc2fa/rp verifies the token's signature through the JWKS; here we only read its claims.
	parts := strings.Split(token.IDToken, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Sub               string   `json:"sub"`
		PreferredUsername string   `json:"preferred_username"`
		AMR               []string `json:"amr"`
	}
	_ = json.Unmarshal(payload, &claims)
	fmt.Println("ID token for ann:", claims.Sub == ann.ID, claims.PreferredUsername, claims.AMR)
	// Output:
	// issuer: /oidc/acme
	// algorithms: [EdDSA RS256 ES256 Ed25519]
	// signing keys: 1 OKP Ed25519
	// login page: 200 true
	// back to: 127.0.0.1:8081/callback state: state-1
	// ID token for ann: true ann@example.com [pwd]
}

// getJSON decodes the JSON body of a GET of u into v.
func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
