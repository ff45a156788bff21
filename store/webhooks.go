package store

import (
	"context"
	"time"
)

// EventWebhookFailing is recorded when delivery to a webhook endpoint gives up (SaveDelivery
// with Failing set, under a Change).
const EventWebhookFailing EventType = "webhook.failing"

// SubjectWebhook is the subject kind of webhook events.
const SubjectWebhook = "webhook"

// WebhookEndpoint is a URL of a tenant's to which visid posts the events of the tenant's log.
type WebhookEndpoint struct {
	// ID is NewID("webhook") unless the caller sets it.
	ID     string
	Tenant string
	// URL receives the events, one POST each.
	URL string
	// Types are the event types sent; empty: every type.
	Types []EventType
	// Secret signs the requests ("whsec_…", package webhooks). A backend that writes it to
	// disk encrypts it (sqlstore: AES-GCM under its key-encryption key).
	Secret  string
	Created time.Time
	// Delivery is where delivery to the endpoint stands.
	Delivery WebhookDelivery
}

// WebhookDelivery is where delivery to an endpoint stands.
type WebhookDelivery struct {
	// Cursor is the last event of the log delivered, or passed over for the endpoint's Types:
	// delivery goes on with the event after it.
	Cursor string
	// Attempts counts the failed attempts at delivering the event after Cursor.
	Attempts int
	// FirstFailure is when the first of those attempts failed; zero when Attempts is 0.
	FirstFailure time.Time
	// NextAttempt is the earliest time of the next attempt.
	NextAttempt time.Time
	// Failing is set when delivery gave up: nothing is sent until it is cleared.
	Failing bool
	// LastError says briefly why the last attempt failed (a status, a timeout); never a
	// response body.
	LastError string
}

// Webhooks stores webhook endpoints and where delivery to each stands, with a lease that lets
// one of many instances deliver to an endpoint at a time.
//
// Every method is safe for concurrent use.
type Webhooks interface {
	// Create stores e and returns it as stored. An empty e.ID gets a new id. An empty
	// e.Delivery.Cursor is set to the last event of the tenant's log at that moment, so the
	// endpoint gets the events recorded after its creation. ErrNotFound if the tenant does
	// not exist; ErrInvalid if e.URL or e.Secret is empty; ErrConflict if the id is taken.
	Create(ctx context.Context, e WebhookEndpoint) (*WebhookEndpoint, error)

	// Get returns the endpoint. ErrNotFound if the tenant or the endpoint does not exist.
	Get(ctx context.Context, tenant, id string) (*WebhookEndpoint, error)

	// List returns the tenant's endpoints in creation order; none for a tenant that does not
	// exist.
	List(ctx context.Context, tenant string) ([]WebhookEndpoint, error)

	// Delete removes the endpoint. ErrNotFound if it does not exist.
	Delete(ctx context.Context, tenant, id string) error

	// Lease gives holder the delivery to the endpoint until until, when no other holder's
	// lease runs past now (holder may renew its own). ErrConflict if another holder's lease
	// runs; ErrNotFound if the endpoint does not exist. Of concurrent Leases of one endpoint
	// by different holders at most one succeeds.
	Lease(ctx context.Context, tenant, id, holder string, now, until time.Time) error

	// SaveDelivery stores d as the endpoint's delivery, if holder's lease runs past now;
	// otherwise ErrConflict and nothing changes (the lease was lost: another holder may have
	// delivered meanwhile). With a Change in ctx, setting Failing records a webhook.failing
	// event in the same write. ErrNotFound if the endpoint does not exist.
	SaveDelivery(ctx context.Context, tenant, id, holder string, now time.Time, d WebhookDelivery) error

	// Resume clears Failing, Attempts, FirstFailure and NextAttempt, so delivery starts again
	// with the event after Cursor. ErrNotFound if the endpoint does not exist.
	Resume(ctx context.Context, tenant, id string) error
}
