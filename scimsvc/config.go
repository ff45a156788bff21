package scimsvc

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// Defaults of Config.
const (
	// DefaultRequestsPerMinute is how many requests an API key may make to one tenant each
	// minute when Config.RateLimiter is nil; the burst is the same, so a quiet key may spend
	// its whole minute at once.
	DefaultRequestsPerMinute = 200
	// DefaultFailuresPerMinute is how many requests without a valid API key one client address
	// may make each minute when Config.AddressLimiter is nil.
	DefaultFailuresPerMinute = 20
	// DefaultMaxBodyBytes is the largest request body accepted when Config.MaxBodyBytes is 0.
	DefaultMaxBodyBytes = 1 << 20
	// MaxResults is the most resources one list response holds; a larger count is capped.
	MaxResults = 100
	// DefaultMaxMultiValued is the most values a multi-valued attribute other than a group's
	// members (emails, phoneNumbers, addresses, roles) may hold when Config.MaxMultiValued is 0.
	DefaultMaxMultiValued = 1_000
	// DefaultMaxGroupMembers is the most members a group may have when Config.MaxGroupMembers
	// is 0. Directory groups synchronized by Entra ID or Okta often have many thousands of
	// members, so members have a limit of their own, far above DefaultMaxMultiValued. Adding or
	// removing members costs the same whatever the group's size (store.Groups.Patch); what
	// grows with it is a response that carries the members (a GET without
	// excludedAttributes=members), about 100 bytes a member, and memory in memstore.
	DefaultMaxGroupMembers = 1_000_000
	// DefaultRequestTimeout is how long one request may take when Config.RequestTimeout is 0.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultMaxConcurrentLists is how many list requests one API key may have in progress at
	// once when Config.MaxConcurrentLists is 0.
	DefaultMaxConcurrentLists = 4
	// DefaultBulkMaxOperations is the most operations one bulk request may hold when
	// Config.BulkMaxOperations is 0. It is below DefaultRequestsPerMinute, as each operation
	// counts as a request.
	DefaultBulkMaxOperations = 100
	// DefaultBulkMaxPayloadBytes is the largest bulk request body accepted when
	// Config.BulkMaxPayloadBytes is 0.
	DefaultBulkMaxPayloadBytes = 1 << 20
	// DefaultCursorTimeout is how long a cursor (RFC 9865) stays good when
	// Config.CursorTimeout is 0: a client must ask for the next page within it.
	DefaultCursorTimeout = time.Hour
	// DefaultDocumentationURI is served as the ServiceProviderConfig's documentationUri when
	// Config.DocumentationURI is empty.
	DefaultDocumentationURI = "https://github.com/visid/visid/blob/main/docs/scim.md"
	// ChangePasswordDocumentationURI is the page that explains why changePassword is not
	// supported (visid keeps no passwords) and why /Me answers 501; /Me's error names it. (The
	// ServiceProviderConfig's changePassword holds only supported, as RFC 7643 §5 defines it.)
	ChangePasswordDocumentationURI = "https://github.com/visid/visid/blob/main/docs/scim.md#passwords-and-me"
)

// Config configures the SCIM handler. The four stores and BaseURL are required; every other
// field has the default its comment gives.
type Config struct {
	// Tenants, Users, Groups and APIKeys are the stores the handler reads and writes. A
	// store.Backend holds all four.
	Tenants store.Tenants
	Users   store.Users
	Groups  store.Groups
	APIKeys store.APIKeys
	// Events is the event log of the backend of Users and Groups. When set, every write the
	// handler makes carries a store.Change (the API key's id as actor, the resource as the
	// API returns it as data), so the store records user.created, user.updated,
	// user.deactivated, group.member_added, … in the same write. nil: no events.
	Events store.Events

	// BaseURL is the absolute URL at which the handler is mounted, such as
	// "https://id.example.com/scim/v2". Resource locations are BaseURL/{tenant}/Users/{id}. The
	// request's Host header is never used.
	BaseURL string

	// RateLimiter limits each API key's requests to each tenant; the limiter's key is
	// "<key id>/<tenant>". nil: an in-memory limiter of DefaultRequestsPerMinute a minute with
	// an equal burst.
	RateLimiter ratelimit.Limiter
	// AddressLimiter limits requests that carry no valid API key, per client address and also
	// per address and claimed key id (the id part of a presented key that exists), so keys
	// cannot be guessed quickly: once a budget is spent, requests without a valid key get 429
	// until it refills. It is consulted only after the presented key is checked, and only
	// failed requests take from it: a valid key is never refused by it, whatever others sent
	// from the same address. nil: an in-memory limiter of DefaultFailuresPerMinute a minute.
	AddressLimiter ratelimit.Limiter
	// ClientAddr names the client of a request for AddressLimiter. nil: ratelimit.ClientAddr,
	// the IP address of r.RemoteAddr (an IPv6 client's /64). Behind a proxy, return the address the proxy reports, and only trust a
	// header that the proxy sets.
	ClientAddr func(r *http.Request) string

	// Logger receives the handler's logs: 5xx at Error, refused requests at Debug. Secrets
	// are never logged. nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock for meta times and key use. nil: time.Now.
	Now func() time.Time
	// MaxBodyBytes bounds request bodies; a larger body gets 413. 0: DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// FilterLimits bounds the filters the handler accepts. Zero: filter's defaults (4 KiB,
	// 64 expressions, depth 32).
	FilterLimits filter.Limits
	// DocumentationURI is served in the ServiceProviderConfig. Empty: DefaultDocumentationURI.
	DocumentationURI string

	// MaxMultiValued is the most values each multi-valued attribute of a resource (emails,
	// phoneNumbers, addresses, roles) may hold once a POST, PUT or PATCH is applied; more is
	// 400 invalidValue, naming the attribute and the limit, and nothing is stored. A PUT or
	// PATCH that leaves an attribute with no more values than it had is accepted even above
	// the limit, so a resource stored under a higher limit can still be changed and shrunk.
	// 0: DefaultMaxMultiValued; negative: no limit.
	MaxMultiValued int
	// MaxGroupMembers is the same limit for the members of a group. 0: DefaultMaxGroupMembers;
	// negative: no limit.
	MaxGroupMembers int
	// GroupNoContent answers a PUT or PATCH of a group with 204 No Content and no body instead
	// of 200 with the group, as RFC 7644 §3.5.2 allows and Entra ID and Okta accept. The
	// trade-off: a group's members are the costly part of its body (about 100 bytes each), so
	// without this a write whose request leaves them in the response (no
	// excludedAttributes=members or attributes=…) reads and sends the whole member list, while
	// with it the client does not see the group as stored and must GET it when it wants to.
	// POST still answers 201 with the group. false: 200 with the group, projected by the
	// request's attributes and excludedAttributes.
	GroupNoContent bool
	// RequestTimeout bounds the time each request may take: the request's context, which every
	// store call of the request receives, gets this deadline from the start of the request. A
	// request whose store call fails once the deadline has passed is answered 503 with
	// Retry-After (RFC 7644 has no status of its own for this; the store, not the request, is
	// at fault, and the client may retry), and a PATCH or PUT whose deadline passes before the
	// store writes stores nothing. Keep it below the http.Server's WriteTimeout, so the answer
	// can still be written. 0: DefaultRequestTimeout; negative: no deadline but the request's
	// own context.
	RequestTimeout time.Duration
	// APIKeyCacheTTL is how long the handler may trust an API key it has read, when the
	// APIKeys store does not implement store.APIKeyVersions, before reading it again: a key
	// revoked meanwhile (by this process or another sharing the store) is still accepted for
	// up to this long. Over a store that implements store.APIKeyVersions (memstore does) keys
	// are cached until the store's keys change, and a revocation takes effect on the next
	// request whatever this is. 0: no cache, every request reads its key from the store;
	// negative is an error.
	APIKeyCacheTTL time.Duration
	// MaxConcurrentLists is how many list requests (GET /Users and GET /Groups, with or
	// without a filter) one API key may have in progress at once; one more is answered 429
	// with Retry-After at once rather than queued. The count is kept in memory by this
	// handler: each instance of a service counts on its own. 0: DefaultMaxConcurrentLists;
	// negative: no limit.
	MaxConcurrentLists int
	// BulkMaxOperations is the most operations one POST /{tenant}/Bulk may hold, advertised as
	// bulk.maxOperations in the ServiceProviderConfig; more is 413 and nothing is done. Each
	// operation takes one request from RateLimiter, all before the first runs, so keep it at
	// most the limiter's burst: a bulk request larger than the burst is always answered 429.
	// 0: DefaultBulkMaxOperations; negative is an error.
	BulkMaxOperations int
	// BulkMaxPayloadBytes bounds the body of a bulk request, advertised as bulk.maxPayloadSize;
	// a larger body is 413 and nothing is done. The data of each operation is also bounded by
	// MaxBodyBytes, as the body of the request it stands for. 0: DefaultBulkMaxPayloadBytes;
	// negative is an error.
	BulkMaxPayloadBytes int64

	// CursorKey is the HMAC-SHA256 key that makes list cursors (RFC 9865 nextCursor and
	// previousCursor) tamper-evident, at least 32 bytes. Every instance that serves the same
	// API must have the same key, or a cursor made by one is invalidCursor at another; changing
	// it ends every walk in progress. Cursors are bound to the tenant and the query, and carry
	// a resource's sort value and creation sequence in the clear: they are not secret. nil: a
	// random key made by New, which suits a single instance (cursors then end with a restart).
	CursorKey []byte
	// CursorTimeout is how long a cursor stays good after it was given: a request with an
	// older one is 400 expiredCursor. It is advertised as the ServiceProviderConfig's
	// pagination.cursorTimeout. 0: DefaultCursorTimeout.
	CursorTimeout time.Duration

	// MeterProvider receives the handler's metrics (MetricRequests, MetricRequestDuration,
	// MetricRateLimited, MetricAuthFailures, MetricFilterErrors). nil: otel.GetMeterProvider(),
	// which records nothing until the host installs an OpenTelemetry SDK.
	MeterProvider metric.MeterProvider
	// TracerProvider receives a server span for each request, named "SCIM <method> <resource
	// type>", with the method, resource type and status as attributes: never a path, query,
	// header or body. Store calls made under the request are its children. nil:
	// otel.GetTracerProvider(), which records nothing until the host installs an SDK.
	// OpenTelemetry's no-op provider (noop.NewTracerProvider()) says the host traces nothing:
	// no span is started.
	TracerProvider trace.TracerProvider
	// MetricsTenant adds the tenant (visid.tenant) to the attributes of the metrics of
	// requests whose API key may act on it; requests refused before (MetricAuthFailures, and
	// their MetricRequests) carry none, so a client without a valid key cannot make series.
	// Each tenant makes series of its own, so turn it on only when the tenants are few. false:
	// no tenant in metrics.
	MetricsTenant bool

	// UserExtensions and GroupExtensions are extension schemas the host adds to the User and
	// Group resource types, in the representation of RFC 7643 §7 (schema.Schema), such as the
	// custom extensions Microsoft Entra ID sends under
	// "urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0:User". Their values are
	// checked against the definitions, stored (store.User.Extensions, store.Group.Extensions),
	// filtered, patched with URN-qualified paths, projected and listed under /Schemas and in
	// the resource types' schemaExtensions, as the enterprise extension's are. They are the
	// same for every tenant of the handler. New returns an error naming the attribute at
	// fault when one is invalid (see schema.CheckSchema). New copies them; nil: none.
	UserExtensions  []schema.Extension
	GroupExtensions []schema.Extension
}

// handler is the SCIM API of one Config.
type handler struct {
	cfg     Config
	base    string // BaseURL without a trailing slash
	log     *slog.Logger
	now     func() time.Time
	keys    ratelimit.Limiter
	addrs   ratelimit.Limiter
	addr    func(*http.Request) string
	maxBody int64
	docURI  string
	mux     *http.ServeMux
	limits  valueLimits
	timeout time.Duration // 0: no deadline
	// keyCache keeps the API keys requests present.
	keyCache *keyCache
	lists    *slots // nil: no limit on concurrent lists
	cursors  *cursors
	tel      *telemetry
	userRT   *schema.ResourceType // schema.User() with Config.UserExtensions
	groupRT  *schema.ResourceType // schema.Group() with Config.GroupExtensions
	users    *resources[store.User, *store.User]
	groups   *resources[store.Group, *store.Group]

	// bulkMaxOps and bulkMaxPayload are Config.BulkMaxOperations and BulkMaxPayloadBytes.
	bulkMaxOps     int
	bulkMaxPayload int64
}

// New returns the SCIM 2.0 API of cfg as an http.Handler. Its paths are relative to where it is
// mounted: /{tenant}/Users, /{tenant}/Groups, /{tenant}/ServiceProviderConfig, … — mount it with
// http.StripPrefix under a prefix. New starts no goroutines.
func New(cfg Config) (http.Handler, error) {
	if cfg.Tenants == nil || cfg.Users == nil || cfg.Groups == nil || cfg.APIKeys == nil {
		return nil, errors.New("scimsvc: Config.Tenants, Users, Groups and APIKeys are required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") ||
		u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("scimsvc: Config.BaseURL must be an absolute http or https URL without query or fragment")
	}
	if cfg.MaxBodyBytes < 0 {
		return nil, errors.New("scimsvc: Config.MaxBodyBytes must not be negative")
	}
	if cfg.APIKeyCacheTTL < 0 {
		return nil, errors.New("scimsvc: Config.APIKeyCacheTTL must not be negative")
	}
	if cfg.BulkMaxOperations < 0 || cfg.BulkMaxPayloadBytes < 0 {
		return nil, errors.New("scimsvc: Config.BulkMaxOperations and BulkMaxPayloadBytes must not be negative")
	}
	userRT, err := schema.User().WithExtensions(cfg.UserExtensions...)
	if err != nil {
		return nil, fmt.Errorf("scimsvc: Config.UserExtensions: %w", err)
	}
	groupRT, err := schema.Group().WithExtensions(cfg.GroupExtensions...)
	if err != nil {
		return nil, fmt.Errorf("scimsvc: Config.GroupExtensions: %w", err)
	}
	h := &handler{
		userRT:  userRT,
		groupRT: groupRT,
		cfg:     cfg,
		base:    strings.TrimRight(cfg.BaseURL, "/"),
		log:     cfg.Logger,
		now:     cfg.Now,
		keys:    cfg.RateLimiter,
		addrs:   cfg.AddressLimiter,
		addr:    cfg.ClientAddr,
		maxBody: cfg.MaxBodyBytes,
		docURI:  cfg.DocumentationURI,
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.keys == nil {
		if h.keys, err = perMinute(DefaultRequestsPerMinute, h.now); err != nil {
			return nil, err
		}
	}
	if h.addrs == nil {
		if h.addrs, err = perMinute(DefaultFailuresPerMinute, h.now); err != nil {
			return nil, err
		}
	}
	if h.addr == nil {
		h.addr = ratelimit.ClientAddr
	}
	if h.maxBody == 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.docURI == "" {
		h.docURI = DefaultDocumentationURI
	}
	h.limits = valueLimits{
		values:  orDefault(cfg.MaxMultiValued, DefaultMaxMultiValued),
		members: orDefault(cfg.MaxGroupMembers, DefaultMaxGroupMembers),
	}
	h.bulkMaxOps = orDefault(cfg.BulkMaxOperations, DefaultBulkMaxOperations)
	h.bulkMaxPayload = cmp.Or(cfg.BulkMaxPayloadBytes, DefaultBulkMaxPayloadBytes)
	h.timeout = orDefault(cfg.RequestTimeout, DefaultRequestTimeout)
	h.keyCache = newKeyCache(cfg.APIKeys, cfg.APIKeyCacheTTL, h.now)
	if n := orDefault(cfg.MaxConcurrentLists, DefaultMaxConcurrentLists); n > 0 {
		h.lists = newSlots(n)
	}
	if h.cursors, err = newCursors(cfg.CursorKey, cfg.CursorTimeout, h.now); err != nil {
		return nil, err
	}
	if h.tel, err = newTelemetry(cfg); err != nil {
		return nil, err
	}
	h.routes()
	return h.tel.instrument(h.recoverer(h)), nil
}

func perMinute(n int, now func() time.Time) (ratelimit.Limiter, error) {
	return ratelimit.NewMemory(ratelimit.MemoryConfig{
		Rate: ratelimit.Rate{Limit: n, Period: time.Minute, Burst: n},
		Now:  now,
	})
}

// orDefault is v for a positive v, def for 0, and 0 (no limit) for a negative v.
func orDefault[N int | time.Duration](v, def N) N {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
