package main

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// The prefixes the APIs are mounted at: tenant T's SCIM base URL is <base URL>/scim/v2/T and its
// issuer <base URL>/oidc/T.
const (
	scimPrefix = "/scim/v2"
	oidcPrefix = "/oidc"
)

// secrets are the keys the service keeps out of the store: the signing keys of ID tokens, the
// pepper of the picture passwords and the key of the login pages' cookies.
type secrets struct {
	keys      *oidc2fa.KeyRing
	pepper    picture.Pepper
	cookieKey []byte
}

// newSecrets makes fresh secrets. They live as long as the process, like the in-memory store.
func newSecrets() (*secrets, error) {
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	if err != nil {
		return nil, err
	}
	s := &secrets{keys: keys, pepper: picture.Pepper{ID: "pepper-1", Key: make([]byte, 32)}, cookieKey: make([]byte, 32)}
	if _, err := rand.Read(s.pepper.Key); err != nil {
		return nil, err
	}
	if _, err := rand.Read(s.cookieKey); err != nil {
		return nil, err
	}
	return s, nil
}

// services are the HTTP APIs of the identity service over one store.
type services struct {
	scim    http.Handler
	oidc    http.Handler
	picture *picture.Authenticator
	// oidcConfig is the provider's Config, for enrollment links.
	oidcConfig oidc2fa.Config
}

// newServices builds every API over backend; baseURL is the service's public URL without a
// trailing slash.
func newServices(backend store.Backend, baseURL string, sec *secrets, log *slog.Logger) (*services, error) {
	scim, err := scimsvc.New(scimsvc.Config{
		Tenants: backend.Tenants,
		Users:   backend.Users,
		Groups:  backend.Groups,
		APIKeys: backend.APIKeys,
		BaseURL: baseURL + scimPrefix,
		Logger:  log,
	})
	if err != nil {
		return nil, err
	}
	auth, err := newPicture(backend, sec, log)
	if err != nil {
		return nil, err
	}
	cfg := oidcConfig(backend, baseURL, auth, log)
	cfg.Signer, cfg.CookieKey = sec.keys, sec.cookieKey
	provider, err := oidc2fa.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("the OpenID provider: %w", err)
	}
	return &services{scim: scim, oidc: provider, picture: auth, oidcConfig: cfg}, nil
}

// newPicture is the picture login over backend.
func newPicture(backend store.Backend, sec *secrets, log *slog.Logger) (*picture.Authenticator, error) {
	auth, err := picture.New(picture.Config{
		Credentials: backend.Pictures,
		Peppers:     []picture.Pepper{sec.pepper},
		Logger:      log,
	})
	if err != nil {
		return nil, fmt.Errorf("the picture login: %w", err)
	}
	return auth, nil
}

// oidcConfig is the part of the provider's Config that enrollment links need too.
func oidcConfig(backend store.Backend, baseURL string, auth oidc2fa.Authenticator, log *slog.Logger) oidc2fa.Config {
	return oidc2fa.Config{
		Tenants:       backend.Tenants,
		Users:         backend.Users,
		Clients:       backend.Clients,
		Codes:         backend.Codes,
		Interactions:  backend.Interactions,
		Authenticator: auth,
		BaseURL:       baseURL + oidcPrefix,
		Logger:        log,
	}
}

// handler mounts every API on one mux.
func (s *services) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(scimPrefix+"/", http.StripPrefix(scimPrefix, s.scim))
	mux.Handle(oidcPrefix+"/", http.StripPrefix(oidcPrefix, s.oidc))
	return mux
}

// scimBaseURL is the SCIM base URL of tenant: what Entra ID calls the Tenant URL.
func scimBaseURL(baseURL, tenant string) string {
	return baseURL + scimPrefix + "/" + tenant
}

// issuer is the OpenID issuer of tenant.
func issuer(baseURL, tenant string) string {
	return baseURL + oidcPrefix + "/" + tenant
}
