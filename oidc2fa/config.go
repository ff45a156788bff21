package oidc2fa

import (
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/store"
)

// Defaults and bounds of Config.
const (
	// DefaultCodeLifetime is how long an authorization code may be redeemed when
	// Config.CodeLifetime is 0.
	DefaultCodeLifetime = 60 * time.Second
	// MaxCodeLifetime is the longest Config.CodeLifetime New accepts.
	MaxCodeLifetime = 10 * time.Minute
	// DefaultIDTokenLifetime is the lifetime of an ID token when Config.IDTokenLifetime is 0.
	DefaultIDTokenLifetime = time.Hour
	// DefaultInteractionLifetime is how long a person has to finish the login pages when
	// Config.InteractionLifetime is 0.
	DefaultInteractionLifetime = 10 * time.Minute
	// DefaultDiscoveryMaxAge is the Cache-Control max-age of the discovery document when
	// Config.DiscoveryMaxAge is 0.
	DefaultDiscoveryMaxAge = time.Hour
	// DefaultJWKSMaxAge is the Cache-Control max-age of the JWKS when Config.JWKSMaxAge is 0;
	// keep it well below the signer's key retention, so clients see a new key before old
	// tokens stop verifying.
	DefaultJWKSMaxAge = 5 * time.Minute
	// DefaultPushedRequestLifetime is how long a pushed authorization request may be used when
	// Config.PushedRequestLifetime is 0.
	DefaultPushedRequestLifetime = 90 * time.Second
	// MaxPushedRequestLifetime is the longest Config.PushedRequestLifetime New accepts.
	MaxPushedRequestLifetime = 10 * time.Minute
	// DefaultReenrollmentMaxAge is, when Config.ReenrollmentMaxAge is 0, how recent the sign-in
	// must be whose ID token a client presents to replace a user's factor.
	DefaultReenrollmentMaxAge = 5 * time.Minute
	// DefaultAccessTokenLifetime is the lifetime of an access token when
	// Config.AccessTokenLifetime is 0; MaxAccessTokenLifetime is the longest New accepts.
	DefaultAccessTokenLifetime = 5 * time.Minute
	MaxAccessTokenLifetime     = 5 * time.Minute
	// DefaultAddressRate is the requests a client address may make each minute to the
	// authorization endpoint and as POSTs to the login and enrollment pages, when
	// Config.AddressLimiter is nil; the burst is the same.
	DefaultAddressRate = 60
)

// Config configures the provider. The stores, Authenticator, Signer and BaseURL are required;
// every other field has the default its comment gives.
type Config struct {
	// Tenants, Users, Clients, Codes and Interactions are the stores the provider reads and
	// writes; a store.Backend holds them all. Users resolves login_hint.
	Tenants      store.Tenants
	Users        store.Users
	Clients      store.Clients
	Codes        store.Codes
	Interactions store.Interactions
	// Pushed stores pushed authorization requests (RFC 9126). nil: the provider offers none
	// (POST /par/{tenant} answers 404 and discovery does not list it), and RequirePAR and a
	// client's RequirePAR cannot be met.
	Pushed store.PushedRequests
	// AccessTokens stores the access tokens of the clients registered with
	// store.Client.AccessToken, which are good only at the UserInfo endpoint
	// (GET|POST /userinfo/{tenant}). nil: no UserInfo endpoint (it answers 404 and discovery does
	// not list it), and such a client's token request fails with server_error.
	AccessTokens store.AccessTokens
	// AccessTokenLifetime is how long an access token is good; 0: DefaultAccessTokenLifetime; at
	// most MaxAccessTokenLifetime.
	AccessTokenLifetime time.Duration
	// Events is the tenants' event log. When set, the provider appends one event as each
	// sign-in and enrollment of a known user ends: secondfactor.succeeded,
	// secondfactor.failed, secondfactor.locked (the factor was locked) and
	// enrollment.completed, with the client's id as actor (admin for an administrator's
	// enrollment link) and {"client":…,"reason":…} as data, never a factor's secret. nil: no
	// events.
	Events store.Events

	// Authenticator runs the login pages: the second factor itself.
	Authenticator Authenticator
	// Signer signs ID tokens and lists the keys of the JWKS; KeyRing is the default.
	Signer Signer

	// BaseURL is the absolute URL at which the handler is mounted, such as
	// "https://id.example.com/oidc". The issuer of tenant T is BaseURL/T, and every endpoint is
	// under BaseURL. The request's Host header is never used.
	BaseURL string

	// CookieKey keys the HMAC of the cookie that binds an interaction to its browser and of the
	// login pages' CSRF tokens; at least 32 bytes. Instances behind one load balancer need the
	// same key. nil: 32 random bytes per New, so interactions do not survive a restart and
	// cannot move between instances.
	CookieKey []byte

	// CodeLifetime is how long a code may be redeemed; 0: DefaultCodeLifetime; at most
	// MaxCodeLifetime.
	CodeLifetime time.Duration
	// IDTokenLifetime sets exp = iat + IDTokenLifetime; 0: DefaultIDTokenLifetime. The signer
	// must keep retired keys published at least this long.
	IDTokenLifetime time.Duration
	// InteractionLifetime is how long the login pages of one authorization request stay usable;
	// 0: DefaultInteractionLifetime.
	InteractionLifetime time.Duration
	// EnrollmentLinkLifetime is how long an enrollment link works if nobody opens it; 0:
	// DefaultEnrollmentLinkLifetime. An opened link gives InteractionLifetime to enroll.
	EnrollmentLinkLifetime time.Duration
	// DiscoveryMaxAge and JWKSMaxAge are the Cache-Control max-age of the discovery document
	// and of the JWKS; 0: DefaultDiscoveryMaxAge and DefaultJWKSMaxAge.
	DiscoveryMaxAge time.Duration
	JWKSMaxAge      time.Duration

	// PushedRequestLifetime is how long a pushed authorization request may be brought to the
	// authorization endpoint; 0: DefaultPushedRequestLifetime; at most MaxPushedRequestLifetime.
	PushedRequestLifetime time.Duration
	// RequirePAR makes every client start with a pushed authorization request: plain requests
	// to the authorization endpoint get invalid_request, and discovery says
	// require_pushed_authorization_requests. A client's own store.Client.RequirePAR does the
	// same for that client alone. Requires Pushed.
	RequirePAR bool
	// ReenrollmentMaxAge is how old, at most, the sign-in may be whose ID token a client sends
	// as id_token_hint to the enrollment endpoint to replace a user's factor; 0:
	// DefaultReenrollmentMaxAge.
	ReenrollmentMaxAge time.Duration

	// TrustedProxies are the networks of the reverse proxies and load balancers in front of the
	// provider. A request's client address is the connection's peer, unless the peer is in one
	// of them: then it is the right-most address of X-Forwarded-For that is not (ClientIP).
	// That address keys AddressLimiter (unless ClientAddr is set) and is Login.ClientAddr, by
	// whose network the picture login counts failures. nil: X-Forwarded-For is never read; so
	// behind a load balancer every request comes from the balancer's address, and all users
	// share one address quota and one lock network.
	TrustedProxies []netip.Prefix
	// AddressLimiter limits, per client address, the requests to the authorization endpoint and
	// the POSTs to the login and enrollment pages, which anyone may send; a denied request gets
	// 429 with Retry-After. The limiter's key is ClientAddr's answer. nil: an in-memory limiter
	// of DefaultAddressRate a minute per address (ratelimit.NewMemory) on the provider's clock;
	// instances behind one load balancer share a quota only through a shared limiter such as
	// ratelimit/redislimit.
	AddressLimiter ratelimit.Limiter
	// ClientAddr names the client of a request for AddressLimiter. nil: the client address
	// (see TrustedProxies), an IPv6 client's /64, as ratelimit.ClientAddr names a connection's
	// peer. It changes the limiter's key only, not Login.ClientAddr.
	ClientAddr func(*http.Request) string

	// Languages adds languages to the provider's own pages (the error pages and the first page
	// of an enrollment link) or changes texts of a built-in one (see Catalog and
	// BuiltinCatalogs). The pages ship in English, German, French, Spanish and Japanese, and
	// speak the language that best matches the person's preferences: the authorization
	// request's ui_locales, then Accept-Language, then the tenant's default language, then
	// English. The Authenticator's pages get the same preferences (Login.Languages). nil: the
	// built-in languages.
	Languages []Catalog

	// AMR, when not nil, is the amr claim of every ID token. nil: the methods the
	// Authenticator reports in Success.Methods (RFC 8176 values where one fits).
	AMR []string

	// Logger receives the provider's logs: failures at Error, refused requests at Debug,
	// replayed codes at Warn. Codes, secrets and tokens are never logged. nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock for codes, interactions and tokens. nil: time.Now.
	Now func() time.Time

	// MeterProvider receives the provider's metrics (MetricRequestDuration,
	// MetricAuthorizations, MetricOutcomes, MetricCodesRedeemed, MetricCodeReplays,
	// MetricPushedRequests); no metric names a user. nil: otel.GetMeterProvider(), which
	// records nothing until the host installs an OpenTelemetry SDK.
	MeterProvider metric.MeterProvider
	// TracerProvider receives a server span for each request, named "OIDC <method>
	// <endpoint>", with the endpoint, method and status as attributes: never a path, query,
	// cookie, code or token. The Authenticator's and the stores' spans are its children. nil:
	// otel.GetTracerProvider(), which records nothing until the host installs an SDK.
	TracerProvider trace.TracerProvider
	// MetricsTenant adds the tenant (visid.tenant) to the attributes of the sign-in and code
	// metrics, counted once the tenant is known to exist; MetricRequestDuration never has it,
	// since a request's path may name any tenant. Each tenant makes series of its own, so turn
	// it on only when the tenants are few. false: no tenant in metrics.
	MetricsTenant bool
}

// provider is the OpenID provider of one Config.
type provider struct {
	cfg       Config
	base      string // BaseURL without a trailing slash
	origin    string // the origin of BaseURL: scheme://host[:port]
	basePath  string // the path of BaseURL, for cookie paths and login links
	secure    bool   // BaseURL is https: cookies are Secure
	log       *slog.Logger
	now       func() time.Time
	cookieKey []byte
	codeLife  time.Duration
	tokenLife time.Duration
	loginLife time.Duration
	linkLife  time.Duration
	discAge   time.Duration
	jwksAge   time.Duration
	parLife   time.Duration
	atLife    time.Duration
	reenroll  time.Duration
	addrs     ratelimit.Limiter
	addrOf    func(*http.Request) string
	tel       *telemetry
	texts     *pagetext.Set
}

// New returns the second-factor OpenID provider of cfg as an http.Handler. Its paths are
// relative to where it is mounted:
//
//	GET|POST /authorize/{tenant}
//	POST     /par/{tenant}                        pushed authorization requests (with Config.Pushed)
//	POST     /token/{tenant}
//	GET      /jwks/{tenant}
//	GET|POST /userinfo/{tenant}                   UserInfo, for access tokens (with Config.AccessTokens)
//	GET      /{tenant}/.well-known/openid-configuration
//	GET|POST /login/{tenant}/{interaction}[/…]   the Authenticator's pages
//	POST     /enroll/{tenant}                     a client's backend asks for an enrollment link
//	GET|POST /enroll/{tenant}/{token}             the one-time enrollment link
//	GET|POST /enrollment/{tenant}/{id}[/…]        the Enroller's pages
//
// The enrollment paths answer 404 unless the Authenticator implements Enroller.
//
// Mount it with http.StripPrefix under the path of BaseURL. New starts no goroutines.
func New(cfg Config) (http.Handler, error) {
	p, err := newProvider(cfg)
	if err != nil {
		return nil, err
	}
	return p.tel.instrument(p.recoverer(http.HandlerFunc(p.route))), nil
}

// newProvider checks cfg and fills in its defaults.
func newProvider(cfg Config) (*provider, error) {
	if cfg.Tenants == nil || cfg.Users == nil || cfg.Clients == nil || cfg.Codes == nil || cfg.Interactions == nil {
		return nil, errors.New("oidc2fa: Config.Tenants, Users, Clients, Codes and Interactions are required")
	}
	if cfg.Authenticator == nil {
		return nil, errors.New("oidc2fa: Config.Authenticator is required")
	}
	if cfg.Signer == nil {
		return nil, errors.New("oidc2fa: Config.Signer is required (NewKeyRing makes one)")
	}
	u, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.CookieKey != nil && len(cfg.CookieKey) < 32 {
		return nil, errors.New("oidc2fa: Config.CookieKey must be at least 32 bytes")
	}
	if cfg.CodeLifetime < 0 || cfg.CodeLifetime > MaxCodeLifetime {
		return nil, errors.New("oidc2fa: Config.CodeLifetime must be between 0 and 10 minutes")
	}
	if cfg.IDTokenLifetime < 0 || cfg.InteractionLifetime < 0 || cfg.EnrollmentLinkLifetime < 0 || cfg.DiscoveryMaxAge < 0 ||
		cfg.JWKSMaxAge < 0 || cfg.ReenrollmentMaxAge < 0 {
		return nil, errors.New("oidc2fa: Config durations must not be negative")
	}
	if cfg.PushedRequestLifetime < 0 || cfg.PushedRequestLifetime > MaxPushedRequestLifetime {
		return nil, errors.New("oidc2fa: Config.PushedRequestLifetime must be between 0 and 10 minutes")
	}
	if cfg.AccessTokenLifetime < 0 || cfg.AccessTokenLifetime > MaxAccessTokenLifetime {
		return nil, errors.New("oidc2fa: Config.AccessTokenLifetime must be between 0 and 5 minutes")
	}
	if cfg.RequirePAR && cfg.Pushed == nil {
		return nil, errors.New("oidc2fa: Config.RequirePAR needs Config.Pushed")
	}
	p := &provider{
		cfg:       cfg,
		base:      strings.TrimRight(cfg.BaseURL, "/"),
		origin:    u.Scheme + "://" + u.Host,
		basePath:  strings.TrimRight(u.EscapedPath(), "/"),
		secure:    u.Scheme == "https",
		log:       cfg.Logger,
		now:       cfg.Now,
		cookieKey: cfg.CookieKey,
		codeLife:  or(cfg.CodeLifetime, DefaultCodeLifetime),
		tokenLife: or(cfg.IDTokenLifetime, DefaultIDTokenLifetime),
		loginLife: or(cfg.InteractionLifetime, DefaultInteractionLifetime),
		linkLife:  or(cfg.EnrollmentLinkLifetime, DefaultEnrollmentLinkLifetime),
		discAge:   or(cfg.DiscoveryMaxAge, DefaultDiscoveryMaxAge),
		jwksAge:   or(cfg.JWKSMaxAge, DefaultJWKSMaxAge),
		parLife:   or(cfg.PushedRequestLifetime, DefaultPushedRequestLifetime),
		atLife:    or(cfg.AccessTokenLifetime, DefaultAccessTokenLifetime),
		reenroll:  or(cfg.ReenrollmentMaxAge, DefaultReenrollmentMaxAge),
		addrs:     cfg.AddressLimiter,
		addrOf:    cfg.ClientAddr,
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.now == nil {
		p.now = time.Now
	}
	for _, pr := range cfg.TrustedProxies {
		if !pr.IsValid() {
			return nil, errors.New("oidc2fa: Config.TrustedProxies holds an invalid prefix")
		}
	}
	if p.addrOf == nil {
		p.addrOf = p.addressKey
	}
	if p.addrs == nil {
		p.addrs, err = ratelimit.NewMemory(ratelimit.MemoryConfig{
			Rate: ratelimit.Rate{Limit: DefaultAddressRate, Period: time.Minute, Burst: DefaultAddressRate},
			Now:  p.now,
		})
		if err != nil {
			return nil, err
		}
	}
	if p.tel, err = newTelemetry(cfg); err != nil {
		return nil, err
	}
	if p.texts, err = newTextSet(cfg.Languages); err != nil {
		return nil, err
	}
	if p.cookieKey == nil {
		p.cookieKey = make([]byte, 32)
		if _, err := rand.Read(p.cookieKey); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// parseBaseURL checks Config.BaseURL.
func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("oidc2fa: Config.BaseURL must be an absolute http or https URL without query or fragment")
	}
	return u, nil
}

func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// issuer is the issuer of tenant.
func (p *provider) issuer(tenant string) string { return p.base + "/" + tenant }
