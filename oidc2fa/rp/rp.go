package rp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Defaults of Config.
const (
	// DefaultHTTPTimeout is the timeout of the HTTP client used when Config.HTTPClient is nil.
	DefaultHTTPTimeout = 10 * time.Second
	// DefaultLeeway is the clock skew allowed for exp, iat and nbf when Config.Leeway is 0.
	DefaultLeeway = time.Minute
	// JWKSRefreshInterval is the least time between two fetches of the JWKS: a token whose kid
	// is unknown triggers a fetch only when the last one is at least this old, so forged kids
	// cannot make the RP hammer the provider.
	JWKSRefreshInterval = 10 * time.Second
)

// maxResponseBytes bounds what is read of a discovery, JWKS or token response.
const maxResponseBytes = 1 << 20

// AuthMethod is how the RP authenticates to the token endpoint.
type AuthMethod string

// The client authentication methods the provider accepts.
const (
	// ClientSecretPost sends client_id and client_secret in the form body: the default.
	ClientSecretPost AuthMethod = "client_secret_post"
	// ClientSecretBasic sends them as HTTP Basic credentials (each form-urlencoded first, as
	// RFC 6749 §2.3.1 asks).
	ClientSecretBasic AuthMethod = "client_secret_basic"
)

// Config configures an RP. Issuer, ClientID, ClientSecret, RedirectURI and Sessions are
// required; every other field has the default its comment gives.
type Config struct {
	// Issuer is the provider's issuer for the tenant, such as
	// "https://id.example.com/oidc/acme". It must equal, byte for byte, the issuer of the
	// discovery document at Issuer + "/.well-known/openid-configuration", the iss parameter of
	// every callback and the iss claim of every ID token. Use https outside development: the
	// client secret travels to the token endpoint.
	Issuer string
	// ClientID and ClientSecret are the client's credentials, as oidc2fa.RegisterClient
	// returned them.
	ClientID     string
	ClientSecret string
	// RedirectURI is the absolute URL of the callback handler, exactly as registered.
	RedirectURI string

	// HTTPClient talks to the provider (discovery, JWKS, token endpoint). nil: a client with a
	// DefaultHTTPTimeout timeout that does not follow redirects, so the client secret is never
	// sent anywhere but the token endpoint.
	HTTPClient *http.Client
	// Now is the clock for checking exp, iat and nbf and for JWKS caching. nil: time.Now.
	Now func() time.Time
	// Sessions keeps each sign-in's state, nonce and PKCE verifier between AuthCodeURL and
	// Callback (and each enrollment's state between EnrollURL and Callback), bound to the
	// browser: NewServerSessions or NewCookieSessions, or the host's own.
	Sessions Sessions
	// AuthMethod is how the RP authenticates to the token endpoint (and to the enrollment
	// endpoint). "": ClientSecretPost.
	AuthMethod AuthMethod
	// Leeway is the clock skew allowed between the RP and the provider when checking exp, iat
	// and nbf. 0: DefaultLeeway; negative is an error.
	Leeway time.Duration
	// DisablePAR makes AuthCodeURL send the authorization request through the browser even when
	// the provider offers pushed authorization requests (RFC 9126). false: AuthCodeURL pushes
	// the request whenever discovery lists pushed_authorization_request_endpoint, so the
	// browser carries only client_id and a one-time request_uri and cannot change the request.
	// New fails when it is set and the provider requires pushed requests.
	DisablePAR bool
	// UILocales, when set, gives for the request that starts a sign-in the person's preferred
	// languages for the provider's pages, as space-separated BCP 47 tags, best first ("de-CH
	// fr"), such as the language the application shows the person; AuthCodeURL sends them as
	// ui_locales (OpenID Connect Core §3.1.2.1), pushed with the request when it pushes. ""
	// sends none, and the provider then follows the browser's Accept-Language. nil: none.
	UILocales func(r *http.Request) string
	// Logger receives the RP's few logs: JWKS fetches at Debug, a failed JWKS refresh that falls
	// back to cached keys at Warn. Codes, secrets, tokens, states and nonces are never logged.
	// nil: slog.Default().
	Logger *slog.Logger
}

// RP is a relying party of one oidc2fa issuer: it starts the second factor with AuthCodeURL (or
// an enrollment with EnrollURL) and finishes it with Callback. It is safe for concurrent use and
// starts no goroutines.
type RP struct {
	cfg       Config
	issuer    string
	authorize *url.URL
	token     string
	enroll    string // the enrollment endpoint; "" when the provider offers none
	par       string // the pushed authorization request endpoint; "" when not used
	// parOffered is the provider's pushed authorization request endpoint, even when
	// Config.DisablePAR leaves par empty (CheckRedirectURI); "" when it lists none.
	parOffered string
	client     *http.Client
	now        func() time.Time
	leeway     time.Duration
	method     AuthMethod
	log        *slog.Logger
	keys       *keyCache
}

// discoveryDoc is the part of the provider metadata the RP reads.
type discoveryDoc struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	AuthorizationResponseISSSupported bool     `json:"authorization_response_iss_parameter_supported"`
	// EnrollmentEndpoint is oidc2fa's own, and optional: where EnrollURL asks for a link.
	EnrollmentEndpoint string `json:"enrollment_endpoint"`
	// PAREndpoint and RequirePAR are RFC 9126's.
	PAREndpoint string `json:"pushed_authorization_request_endpoint"`
	RequirePAR  bool   `json:"require_pushed_authorization_requests"`
}

// New checks cfg and fetches the provider's discovery document once, with ctx; the RP keeps
// the endpoints it names for its whole life (restart or call New again to pick up new ones).
// New fails when the provider cannot be reached, when the document's issuer is not exactly
// cfg.Issuer, when EdDSA is not among its ID token algorithms, when it does not promise the iss
// parameter of RFC 9207, or when it rules out S256 or cfg.AuthMethod. An enrollment_endpoint is
// optional (without one, EnrollURL returns ErrNoEnrollment), but one that is not an absolute
// http or https URL fails New too. The JWKS is fetched at the first Callback. New starts no
// goroutines.
func New(ctx context.Context, cfg Config) (*RP, error) {
	if err := checkAbsURL("Issuer", cfg.Issuer); err != nil {
		return nil, err
	}
	if strings.ContainsAny(cfg.Issuer, "?#") {
		return nil, errors.New("rp: Config.Issuer must have no query or fragment")
	}
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("rp: Config.ClientID and Config.ClientSecret are required")
	}
	if err := checkAbsURL("RedirectURI", cfg.RedirectURI); err != nil {
		return nil, err
	}
	if cfg.Sessions == nil {
		return nil, errors.New("rp: Config.Sessions is required (NewServerSessions or NewCookieSessions make one)")
	}
	if cfg.Leeway < 0 {
		return nil, errors.New("rp: Config.Leeway must not be negative")
	}
	p := &RP{
		cfg:    cfg,
		issuer: cfg.Issuer,
		client: cfg.HTTPClient,
		now:    cfg.Now,
		leeway: cfg.Leeway,
		method: cfg.AuthMethod,
		log:    cfg.Logger,
	}
	switch p.method {
	case "":
		p.method = ClientSecretPost
	case ClientSecretPost, ClientSecretBasic:
	default:
		return nil, fmt.Errorf("rp: Config.AuthMethod %q is not client_secret_post or client_secret_basic", cfg.AuthMethod)
	}
	if p.client == nil {
		p.client = &http.Client{
			Timeout:       DefaultHTTPTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.leeway == 0 {
		p.leeway = DefaultLeeway
	}
	if p.log == nil {
		p.log = slog.Default()
	}

	var doc discoveryDoc
	wellKnown := strings.TrimSuffix(cfg.Issuer, "/") + "/.well-known/openid-configuration"
	if _, err := p.getJSON(ctx, wellKnown, &doc); err != nil {
		return nil, fmt.Errorf("rp: discovery: %w: %w", ErrDiscovery, err)
	}
	if doc.Issuer != cfg.Issuer {
		return nil, fmt.Errorf("rp: discovery: the document names the issuer %q, not Config.Issuer %q: %w: %w", doc.Issuer, cfg.Issuer, ErrDiscovery, ErrIssuer)
	}
	for name, u := range map[string]string{
		"authorization_endpoint": doc.AuthorizationEndpoint,
		"token_endpoint":         doc.TokenEndpoint,
		"jwks_uri":               doc.JWKSURI,
	} {
		if err := checkAbsURL(name, u); err != nil {
			return nil, fmt.Errorf("rp: discovery: %w: %w", ErrDiscovery, err)
		}
	}
	for name, u := range map[string]string{
		"enrollment_endpoint":                   doc.EnrollmentEndpoint,
		"pushed_authorization_request_endpoint": doc.PAREndpoint,
	} {
		if u == "" {
			continue
		}
		if err := checkAbsURL(name, u); err != nil {
			return nil, fmt.Errorf("rp: discovery: %w: %w", ErrDiscovery, err)
		}
	}
	switch {
	case !slices.Contains(doc.IDTokenSigningAlgValuesSupported, "EdDSA"):
		return nil, fmt.Errorf("rp: discovery: the provider does not offer EdDSA ID tokens (offers %q): %w", doc.IDTokenSigningAlgValuesSupported, ErrDiscovery)
	case !doc.AuthorizationResponseISSSupported:
		return nil, fmt.Errorf("rp: discovery: the provider does not send the iss parameter (RFC 9207), which the RP requires: %w", ErrDiscovery)
	case doc.CodeChallengeMethodsSupported != nil && !slices.Contains(doc.CodeChallengeMethodsSupported, "S256"):
		return nil, fmt.Errorf("rp: discovery: the provider does not support PKCE with S256: %w", ErrDiscovery)
	case doc.TokenEndpointAuthMethodsSupported != nil && !slices.Contains(doc.TokenEndpointAuthMethodsSupported, string(p.method)):
		return nil, fmt.Errorf("rp: discovery: the provider does not accept %s (accepts %q): %w", p.method, doc.TokenEndpointAuthMethodsSupported, ErrDiscovery)
	case doc.RequirePAR && (cfg.DisablePAR || doc.PAREndpoint == ""):
		return nil, fmt.Errorf("rp: discovery: the provider requires pushed authorization requests, which Config.DisablePAR turns off or it does not list: %w", ErrDiscovery)
	}
	p.parOffered = doc.PAREndpoint
	if !cfg.DisablePAR {
		p.par = doc.PAREndpoint
	}
	p.authorize, _ = url.Parse(doc.AuthorizationEndpoint)
	p.token = doc.TokenEndpoint
	p.enroll = doc.EnrollmentEndpoint
	p.keys = &keyCache{rp: p, uri: doc.JWKSURI}
	return p, nil
}

// checkAbsURL checks that s is an absolute http or https URL with a host.
func checkAbsURL(name, s string) error {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return fmt.Errorf("rp: %s %q is not an absolute http or https URL", name, s)
	}
	return nil
}

// AuthCodeURL is AuthCodeURLContext with r's context: the usual call from the handler that
// checked the first factor.
func (p *RP) AuthCodeURL(w http.ResponseWriter, r *http.Request, loginHint string) (string, error) {
	return p.AuthCodeURLContext(r.Context(), w, r, loginHint)
}

// AuthCodeURLContext starts the second factor for the user the first factor identified:
// loginHint is that user's userName, primary email or visid id. It makes a fresh state and
// nonce (256 bits each) and a PKCE verifier, saves them with Config.Sessions (which may set a
// cookie on w, so call it before writing the response), and returns the authorization URL to
// redirect the browser to: an authorization request with response_type=code, scope
// "openid 2fa", PKCE S256 and login_hint.
//
// When the provider offers pushed authorization requests (and Config.DisablePAR is not set),
// it first POSTs the request to the provider with the client's credentials (RFC 9126), with
// ctx, and the URL carries only client_id and the one-time request_uri, so the browser cannot
// change the user, the redirect URI or anything else; the browser must get there within the
// request_uri's lifetime (90 seconds at visid). A refusal of the provider is an *AuthError, and
// then nothing is saved for the browser.
//
// Whether pushed or not, Callback checks that the ID token names the user of loginHint
// (ErrWrongUser).
func (p *RP) AuthCodeURLContext(ctx context.Context, w http.ResponseWriter, r *http.Request, loginHint string) (string, error) {
	if loginHint == "" {
		return "", errors.New("rp: AuthCodeURL needs the login hint of the user the first factor identified")
	}
	s := Session{
		State:     randomString(),
		Nonce:     randomString(),
		Verifier:  randomString(), // 43 characters of the unreserved set (RFC 7636 §4.1)
		LoginHint: loginHint,
	}
	sum := sha256.Sum256([]byte(s.Verifier))
	params := url.Values{
		"response_type":         {"code"},
		"client_id":             {p.cfg.ClientID},
		"redirect_uri":          {p.cfg.RedirectURI},
		"scope":                 {"openid 2fa"},
		"state":                 {s.State},
		"nonce":                 {s.Nonce},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"login_hint":            {loginHint},
	}
	if p.cfg.UILocales != nil {
		if tags := strings.TrimSpace(p.cfg.UILocales(r)); tags != "" {
			params.Set("ui_locales", tags)
		}
	}
	if p.par != "" {
		ref, err := p.push(ctx, params)
		if err != nil {
			return "", err
		}
		params = url.Values{"client_id": {p.cfg.ClientID}, "request_uri": {ref}}
	}
	if err := p.cfg.Sessions.Save(w, r, s); err != nil {
		return "", fmt.Errorf("rp: saving the sign-in session: %w", err)
	}
	u := *p.authorize
	q := u.Query() // keeps any query the endpoint has
	for k, v := range params {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// parResponse is an answer of the pushed authorization request endpoint.
type parResponse struct {
	RequestURI string `json:"request_uri"`
	ExpiresIn  int64  `json:"expires_in"`
	errorResponse
}

// push sends the authorization request params to the provider's PAR endpoint and returns the
// request_uri it answers with.
func (p *RP) push(ctx context.Context, params url.Values) (string, error) {
	return p.pushTo(ctx, p.par, params)
}

// pushTo is push to the PAR endpoint endpoint.
func (p *RP) pushTo(ctx context.Context, endpoint string, params url.Values) (string, error) {
	form := url.Values{}
	for k, v := range params {
		form[k] = v // client_id stays, as RFC 9126 §2.1 asks, whatever the authentication
	}
	resp, body, err := p.postForm(ctx, "pushed authorization request", endpoint, form)
	if err != nil {
		return "", err
	}
	var pr parResponse
	jsonErr := json.Unmarshal(body, &pr)
	switch {
	case jsonErr == nil && pr.Error != "":
		return "", pr.authError()
	case resp.StatusCode != http.StatusCreated:
		return "", fmt.Errorf("rp: pushed authorization request: the endpoint answered %s", resp.Status)
	case jsonErr != nil:
		return "", fmt.Errorf("rp: pushed authorization request: %w", jsonErr)
	case !strings.HasPrefix(pr.RequestURI, "urn:ietf:params:oauth:request_uri:"):
		return "", errors.New("rp: pushed authorization request: the answer has no request_uri")
	}
	return pr.RequestURI, nil
}

// randomString is 256 random bits, base64url-encoded without padding: 43 characters.
func randomString() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand crashes the program rather than return an error
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// getJSON fetches target and decodes its JSON body into v; it returns the response's headers.
func (p *RP) getJSON(ctx context.Context, target string, v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := readBody(resp)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", target, resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, fmt.Errorf("GET %s: the answer is %q, not JSON", target, mt)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("GET %s: %w", target, err)
	}
	return resp.Header, nil
}

// postForm POSTs form to one of the provider's endpoints (the token or the enrollment endpoint)
// with the client's authentication (Config.AuthMethod), and returns the answer with its body
// read (at most maxResponseBytes) and closed. what names the request in errors. It adds the
// credentials to form.
func (p *RP) postForm(ctx context.Context, what, endpoint string, form url.Values) (*http.Response, []byte, error) {
	if p.method == ClientSecretPost {
		form.Set("client_id", p.cfg.ClientID)
		form.Set("client_secret", p.cfg.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, fmt.Errorf("rp: %s: %w", what, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if p.method == ClientSecretBasic {
		req.SetBasicAuth(url.QueryEscape(p.cfg.ClientID), url.QueryEscape(p.cfg.ClientSecret))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("rp: %s: %w", what, err)
	}
	defer resp.Body.Close()
	body, err := readBody(resp)
	if err != nil {
		return nil, nil, fmt.Errorf("rp: %s: %w", what, err)
	}
	return resp, body, nil
}

// errorResponse is the error members of a JSON answer of the token or the enrollment endpoint
// (RFC 6749 §5.2).
type errorResponse struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
	ErrorURI         string `json:"error_uri"`
}

func (e *errorResponse) authError() *AuthError {
	return &AuthError{Code: e.Error, Description: e.ErrorDescription, URI: e.ErrorURI}
}

// readBody reads at most maxResponseBytes of resp's body.
func readBody(resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxResponseBytes {
		return nil, fmt.Errorf("the answer is larger than %d bytes", maxResponseBytes)
	}
	return body, nil
}
