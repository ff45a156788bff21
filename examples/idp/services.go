package main

import (
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/ratelimit/redislimit"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// The prefixes the APIs are mounted at: tenant T's SCIM base URL is <base URL>/scim/v2/T and its
// issuer <base URL>/oidc/T.
const (
	scimPrefix = "/scim/v2"
	oidcPrefix = "/oidc"
)

// secrets are the keys the service keeps out of the store's plain data: the signing keys of
// ID tokens (in the store, which encrypts them under the key-encryption key), and the pepper of
// the picture passwords and the key of the login pages' cookies (derived from the
// key-encryption key, never stored).
type secrets struct {
	keys      *oidc2fa.KeyRing
	pepper    picture.Pepper
	cookieKey []byte
	// cursorKey signs the SCIM API's list cursors, so that a walk may go through any instance.
	cursorKey []byte
}

// newSecrets loads or makes the signing keys in b and derives the pepper and the cookie key
// from kek, the 32-byte key-encryption key. Every instance with the same store and kek has the
// same secrets.
func newSecrets(ctx context.Context, b store.Backend, kek []byte) (*secrets, error) {
	if len(kek) != 32 {
		return nil, fmt.Errorf("the key-encryption key must be 32 bytes, not %d", len(kek))
	}
	keys, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, b.SigningKeys)
	if err != nil {
		return nil, err
	}
	pepper, err := hkdf.Key(sha256.New, kek, nil, "visid idp: picture password pepper v1", 32)
	if err != nil {
		return nil, err
	}
	cookieKey, err := hkdf.Key(sha256.New, kek, nil, "visid idp: login cookie key v1", 32)
	if err != nil {
		return nil, err
	}
	cursorKey, err := hkdf.Key(sha256.New, kek, nil, "visid idp: scim cursor key v1", 32)
	if err != nil {
		return nil, err
	}
	// The pepper's id names it by a hash, so a credential keyed with another key-encryption key
	// fails with "unknown pepper" in the log rather than as a wrong picture.
	id := sha256.Sum256(pepper)
	return &secrets{
		keys:      keys,
		pepper:    picture.Pepper{ID: "kek-" + hex.EncodeToString(id[:4]), Key: pepper},
		cookieKey: cookieKey,
		cursorKey: cursorKey,
	}, nil
}

// randomKEK is a fresh key-encryption key, for a store that lives as long as the process.
func randomKEK() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails: crypto/rand crashes the program rather than return an error
	return k
}

// limiters are the rate limiters of the SCIM API (per key, and per address for requests without
// a valid key) and of the OpenID provider's pages (per address); nil ones are the APIs'
// in-memory defaults. ping, when not nil, checks that the Redis they share answers.
type limiters struct {
	keys, addrs, oidcAddrs ratelimit.Limiter
	ping                   func(context.Context) error
}

// memoryLimiters are the in-memory limiters of one instance, with scimRate (-scim-rate and
// -scim-burst) per SCIM API key and tenant; the others are the APIs' defaults.
func memoryLimiters(scimRate ratelimit.Rate) (limiters, error) {
	keys, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: scimRate})
	if err != nil {
		return limiters{}, err
	}
	return limiters{keys: keys}, nil
}

// redisLimiters are the SCIM API's and the provider's limiters on the Redis at url, shared by
// every instance that uses it, with scimRate per SCIM API key and tenant; close closes the
// client.
func redisLimiters(url string, scimRate ratelimit.Rate, log *slog.Logger) (lim limiters, close func() error, err error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return limiters{}, nil, &cli.UsageError{Msg: fmt.Sprintf("-redis %q: %v", url, err)}
	}
	// Short timeouts and few retries: when Redis is away, the limiters fall back to memory
	// instead of holding requests up.
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	opts.DialerRetries, opts.MaxRetries = 1, 1
	rdb := redis.NewClient(opts)
	lim.keys, err = redislimit.New(redislimit.Config{Client: rdb, Logger: log, Prefix: "visid:scim:key:", Rate: scimRate})
	if err == nil {
		lim.addrs, err = redislimit.New(redislimit.Config{Client: rdb, Logger: log, Prefix: "visid:scim:addr:",
			Rate: ratelimit.Rate{Limit: scimsvc.DefaultFailuresPerMinute, Period: time.Minute}})
	}
	if err == nil {
		lim.oidcAddrs, err = redislimit.New(redislimit.Config{Client: rdb, Logger: log, Prefix: "visid:oidc:addr:",
			Rate: ratelimit.Rate{Limit: oidc2fa.DefaultAddressRate, Period: time.Minute}})
	}
	if err != nil {
		rdb.Close()
		return limiters{}, nil, err
	}
	lim.ping = func(ctx context.Context) error { return rdb.Ping(ctx).Err() }
	return lim, rdb.Close, nil
}

// services are the HTTP APIs of the identity service over one store. Their metrics go to mp
// (nil: OpenTelemetry's global provider).
type services struct {
	scim    http.Handler
	oidc    http.Handler
	picture *picture.Authenticator
	// oidcConfig is the provider's Config, for enrollment links.
	oidcConfig oidc2fa.Config
	// baseURL is the service's public URL, for the start page.
	baseURL string
	// demo reports demo mode, for the start page.
	demo bool
}

// newServices builds every API over backend; baseURL is the service's public URL without a
// trailing slash. groupNoContent is -scim-group-no-content (scimsvc.Config.GroupNoContent). A
// request from one of trusted (-trusted-proxy) comes from the client its X-Forwarded-For names,
// for the address limits and the picture login's lock. scimConfig may change the SCIM
// handler's Config further (add extensions).
func newServices(backend store.Backend, baseURL string, sec *secrets, lim limiters, requirePAR, groupNoContent bool,
	trusted []netip.Prefix, log *slog.Logger, mp metric.MeterProvider, scimConfig ...func(*scimsvc.Config)) (*services, error) {
	var scimAddr func(*http.Request) string
	if len(trusted) > 0 {
		scimAddr = func(r *http.Request) string { return clientKey(r, trusted) }
	}
	scimCfg := scimsvc.Config{
		Tenants:        backend.Tenants,
		Users:          backend.Users,
		Groups:         backend.Groups,
		APIKeys:        backend.APIKeys,
		Events:         backend.Events,
		BaseURL:        baseURL + scimPrefix,
		RateLimiter:    lim.keys,
		AddressLimiter: lim.addrs,
		ClientAddr:     scimAddr,
		Logger:         log,
		RequestTimeout: scimRequestTimeout,
		MeterProvider:  mp,
		TracerProvider: tracerProvider,
		GroupNoContent: groupNoContent,
		CursorKey:      sec.cursorKey,
	}
	for _, f := range scimConfig {
		f(&scimCfg)
	}
	scim, err := scimsvc.New(scimCfg)
	if err != nil {
		return nil, err
	}
	auth, err := newPicture(backend, sec.pepper, log, mp)
	if err != nil {
		return nil, err
	}
	cfg := oidcConfig(backend, baseURL, auth, log)
	cfg.MeterProvider, cfg.TracerProvider = mp, tracerProvider
	cfg.Signer, cfg.CookieKey = sec.keys, sec.cookieKey
	cfg.AddressLimiter, cfg.RequirePAR, cfg.TrustedProxies = lim.oidcAddrs, requirePAR, trusted
	provider, err := oidc2fa.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("the OpenID provider: %w", err)
	}
	return &services{scim: scim, oidc: provider, picture: auth, oidcConfig: cfg, baseURL: baseURL}, nil
}

// clientKey names the client of r behind trusted for an address limiter, as the provider does:
// its address, an IPv6 client's /64.
func clientKey(r *http.Request, trusted []netip.Prefix) string {
	a := oidc2fa.ClientIP(r, trusted)
	switch {
	case !a.IsValid():
		return ratelimit.ClientAddr(r)
	case a.Is6():
		return netip.PrefixFrom(a, 64).Masked().String()
	}
	return a.String()
}

// newPicture is the picture login over backend, with its users' passkeys (offered to the
// tenants that allow them); its metrics go to mp (nil: OpenTelemetry's global provider).
func newPicture(backend store.Backend, pepper picture.Pepper, log *slog.Logger, mp metric.MeterProvider) (*picture.Authenticator, error) {
	auth, err := picture.New(picture.Config{
		Credentials:    backend.Pictures,
		Passkeys:       backend.Passkeys,
		Peppers:        []picture.Pepper{pepper},
		Logger:         log,
		MeterProvider:  mp,
		TracerProvider: tracerProvider,
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
		Pushed:        backend.Pushed,
		AccessTokens:  backend.AccessTokens,
		Events:        backend.Events,
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
	mux.Handle("GET /{$}", s.startPage())
	mux.Handle("GET /favicon.ico", favicon())
	mux.Handle("GET /favicon.svg", favicon())
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

// redactPath is the path of a request to the service as its access log shows it: the secrets a
// path of the second factor carries (oidc2fa.RedactPath) left out.
func redactPath(path string) string {
	if rest, ok := strings.CutPrefix(path, oidcPrefix); ok && strings.HasPrefix(rest, "/") {
		return oidcPrefix + oidc2fa.RedactPath(rest)
	}
	return path
}
