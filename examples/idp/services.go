package main

import (
	"log/slog"
	"net/http"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// scimPrefix is where the SCIM API is mounted; tenant T's SCIM base URL is
// <base URL>/scim/v2/T.
const scimPrefix = "/scim/v2"

// services are the HTTP APIs of the identity service over one store.
type services struct {
	scim http.Handler
	// The OpenID provider (oidc2fa) joins here, mounted at /oidc/.
}

// newServices builds every API over backend; baseURL is the service's public URL without a
// trailing slash.
func newServices(backend store.Backend, baseURL string, log *slog.Logger) (*services, error) {
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
	return &services{scim: scim}, nil
}

// handler mounts every API on one mux.
func (s *services) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(scimPrefix+"/", http.StripPrefix(scimPrefix, s.scim))
	return mux
}

// scimBaseURL is the SCIM base URL of tenant: what Entra ID calls the Tenant URL.
func scimBaseURL(baseURL, tenant string) string {
	return baseURL + scimPrefix + "/" + tenant
}
