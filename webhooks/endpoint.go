package webhooks

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/visid/visid/store"
)

// eventTypes are the event types an endpoint may ask for.
var eventTypes = []store.EventType{
	store.EventUserCreated, store.EventUserUpdated, store.EventUserDeactivated, store.EventUserReactivated,
	store.EventUserDeleted, store.EventGroupCreated, store.EventGroupUpdated, store.EventGroupDeleted,
	store.EventGroupMemberAdded, store.EventGroupMemberRemoved,
	store.EventSecondFactorSucceeded, store.EventSecondFactorFailed, store.EventSecondFactorLocked,
	store.EventSecondFactorUnlocked, store.EventEnrollmentCompleted, store.EventPasskeyRemoved,
	store.EventClientCreated, store.EventClientUpdated, store.EventClientSecretRotated, store.EventClientDeleted,
	store.EventAPIKeyCreated, store.EventAPIKeyRevoked, store.EventWebhookFailing, store.EventTenantUpdated,
}

// EventTypes returns the event types an endpoint may ask for.
func EventTypes() []store.EventType { return slices.Clone(eventTypes) }

// EndpointSpec describes a new webhook endpoint.
type EndpointSpec struct {
	Tenant string
	// URL receives the events. It must be https, or http for a loopback host (127.0.0.1,
	// [::1], localhost) when AllowLoopbackHTTP is set, with no user info or fragment.
	URL string
	// Types are the event types sent (EventTypes); empty: all.
	Types []store.EventType
	// AllowLoopbackHTTP lets URL be http on a loopback host: for development and tests only.
	// It does not let the host be loopback: that needs AllowPrivateTargets too.
	AllowLoopbackHTTP bool
	// AllowPrivateTargets lets URL's host be a loopback, private, link-local or otherwise
	// internal address, or a name that resolves to one (ErrPrivateTarget): for development
	// and tests only. The Deliverer needs Config.AllowPrivateTargets as well to send there.
	AllowPrivateTargets bool
	// Resolver resolves URL's host for the check of CheckTarget. nil: net.DefaultResolver.
	Resolver *net.Resolver
	// Now is the endpoint's creation time. Zero: time.Now().
	Now time.Time
}

// AddEndpoint checks spec, makes a secret (NewSecret) and stores the endpoint, which gets the
// events recorded from then on. It returns the secret, to be shown once to whoever receives
// the events, and the endpoint as stored. Errors about spec wrap store.ErrInvalid (and
// ErrPrivateTarget for an internal host, see CheckTarget, unless AllowPrivateTargets); a
// missing tenant is store.ErrNotFound.
func AddEndpoint(ctx context.Context, ws store.Webhooks, spec EndpointSpec) (string, *store.WebhookEndpoint, error) {
	if err := CheckURL(spec.URL, spec.AllowLoopbackHTTP); err != nil {
		return "", nil, err
	}
	if !spec.AllowPrivateTargets {
		if err := CheckTarget(ctx, spec.URL, spec.Resolver); err != nil {
			return "", nil, err
		}
	}
	types := make([]store.EventType, 0, len(spec.Types))
	for _, t := range spec.Types {
		if !slices.Contains(eventTypes, t) {
			return "", nil, fmt.Errorf("webhooks: unknown event type %q: %w", t, store.ErrInvalid)
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	secret, err := NewSecret()
	if err != nil {
		return "", nil, err
	}
	now := spec.Now
	if now.IsZero() {
		now = time.Now()
	}
	e, err := ws.Create(ctx, store.WebhookEndpoint{Tenant: spec.Tenant, URL: spec.URL, Types: types, Secret: secret, Created: now.UTC()})
	if err != nil {
		return "", nil, fmt.Errorf("webhooks: storing the endpoint: %w", err)
	}
	return secret, e, nil
}

// CheckURL reports whether raw may receive events: an absolute https URL with a host, or http
// on a loopback host when allowLoopbackHTTP is set; no user info, no fragment. Its error wraps
// store.ErrInvalid.
func CheckURL(raw string, allowLoopbackHTTP bool) error {
	bad := func(why string) error {
		return fmt.Errorf("webhooks: the endpoint URL %s: %w", why, store.ErrInvalid)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "":
		return bad("is not an absolute URL with a host")
	case u.User != nil || u.Fragment != "" || strings.Contains(raw, "#"):
		return bad("must have no user info or fragment")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		if !allowLoopbackHTTP {
			return bad("uses http; use https (http on a loopback host only where the deployment allows it)")
		}
		return nil
	}
	return bad("must use https")
}

// loopback reports whether host is a loopback address or localhost.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
