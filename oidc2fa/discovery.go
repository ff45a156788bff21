package oidc2fa

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/visid/visid/store"
)

// discoveryDoc is the OpenID Provider Metadata (OpenID Connect Discovery 1.0 §3).
type discoveryDoc struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	JWKSURI               string `json:"jwks_uri"`
	// UserInfoEndpoint is listed when the provider stores access tokens (Config.AccessTokens).
	UserInfoEndpoint                  string   `json:"userinfo_endpoint,omitempty"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClaimsSupported                   []string `json:"claims_supported"`
	PromptValuesSupported             []string `json:"prompt_values_supported"`
	AuthorizationResponseISSSupported bool     `json:"authorization_response_iss_parameter_supported"`
	RequestParameterSupported         bool     `json:"request_parameter_supported"`
	RequestURIParameterSupported      bool     `json:"request_uri_parameter_supported"`
	ClaimsParameterSupported          bool     `json:"claims_parameter_supported"`
	UILocalesSupported                []string `json:"ui_locales_supported"`
	// PAREndpoint and RequirePAR are RFC 9126 §5's; the endpoint is listed when the provider has
	// a store for pushed requests.
	PAREndpoint string `json:"pushed_authorization_request_endpoint,omitempty"`
	RequirePAR  bool   `json:"require_pushed_authorization_requests"`
	// EnrollmentEndpoint is visid's own: where a client's backend asks for an enrollment link.
	EnrollmentEndpoint string `json:"enrollment_endpoint,omitempty"`
}

// knownTenant answers 404 unless tenant exists; it reports whether to go on.
func (p *provider) knownTenant(w http.ResponseWriter, r *http.Request, tenant string) bool {
	if !store.ValidTenantID(tenant) {
		http.Error(w, "not found", http.StatusNotFound)
		return false
	}
	_, err := p.cfg.Tenants.Get(r.Context(), tenant)
	switch {
	case errors.Is(err, store.ErrNotFound):
		http.Error(w, "not found", http.StatusNotFound)
		return false
	case err != nil:
		p.log.ErrorContext(r.Context(), "reading a tenant failed", "tenant", tenant, "err", err)
		plainServerError(w, err)
		return false
	}
	return true
}

func (p *provider) discovery(w http.ResponseWriter, r *http.Request, tenant string) {
	if !p.knownTenant(w, r, tenant) {
		return
	}
	enrollment := ""
	if _, ok := p.cfg.Authenticator.(Enroller); ok {
		enrollment = p.base + "/enroll/" + tenant
	}
	par := ""
	if p.cfg.Pushed != nil {
		par = p.base + "/par/" + tenant
	}
	userinfo := ""
	if p.cfg.AccessTokens != nil {
		userinfo = p.base + "/userinfo/" + tenant
	}
	body, err := json.Marshal(discoveryDoc{
		Issuer:                            p.issuer(tenant),
		AuthorizationEndpoint:             p.base + "/authorize/" + tenant,
		TokenEndpoint:                     p.base + "/token/" + tenant,
		JWKSURI:                           p.base + "/jwks/" + tenant,
		UserInfoEndpoint:                  userinfo,
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{"authorization_code"},
		SubjectTypesSupported:             []string{"public"},
		IDTokenSigningAlgValuesSupported:  p.algorithms(),
		ScopesSupported:                   []string{"openid", "2fa"},
		TokenEndpointAuthMethodsSupported: []string{"client_secret_post", "client_secret_basic"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		ClaimsSupported:                   []string{"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "amr", "preferred_username", "email"},
		PromptValuesSupported:             []string{"login"},
		UILocalesSupported:                p.uiLocalesSupported(),
		AuthorizationResponseISSSupported: true,
		PAREndpoint:                       par,
		RequirePAR:                        p.cfg.RequirePAR,
		EnrollmentEndpoint:                enrollment,
	})
	if err != nil {
		p.log.ErrorContext(r.Context(), "encoding discovery failed", "err", err)
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	}
	writeCacheable(w, body, p.discAge)
}

func (p *provider) jwks(w http.ResponseWriter, r *http.Request, tenant string) {
	if !p.knownTenant(w, r, tenant) {
		return
	}
	keys, err := p.cfg.Signer.Keys(r.Context(), tenant)
	if err == nil {
		var body []byte
		if body, err = jwksJSON(keys); err == nil {
			writeCacheable(w, body, p.jwksAge)
			return
		}
	}
	p.log.ErrorContext(r.Context(), "reading the signing keys failed", "tenant", tenant, "err", err)
	plainServerError(w, err)
}

// algorithms are the JWS algorithms of the signer: an AlgorithmSigner's, or EdDSA alone.
func (p *provider) algorithms() []string {
	if as, ok := p.cfg.Signer.(AlgorithmSigner); ok {
		return as.Algorithms()
	}
	return []string{AlgEdDSA}
}

func writeCacheable(w http.ResponseWriter, body []byte, age time.Duration) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(age/time.Second)))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}
