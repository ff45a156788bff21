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
	// event in the same write. ErrNotFound if the endpoint does not exist; ErrInvalid if
	// d.Cursor is neither empty nor a cursor of the store's log.
	//
	// It also says where the endpoint stands for Due: caught up (no event after d.Cursor) or
	// failing, it is not due; with events left, it is due at d.NextAttempt, or, when that is
	// zero, from now on.
	SaveDelivery(ctx context.Context, tenant, id, holder string, now time.Time, d WebhookDelivery) error

	// Resume clears Failing, Attempts, FirstFailure and NextAttempt, so delivery starts again
	// with the event after Cursor. ErrNotFound if the endpoint does not exist.
	Resume(ctx context.Context, tenant, id string) error

	// Due returns, across tenants, at most limit endpoints that are due at now, oldest due
	// first. An endpoint is due when it is not Failing, its NextAttempt is zero or not after
	// now, no holder's lease of it runs past now, and its tenant's log holds an event after its
	// Cursor. Nothing due: an empty slice. A deleted endpoint, or one of a deleted tenant, is
	// never returned. ErrInvalid if limit is below 1.
	//
	// An endpoint is due since its NextAttempt, since the SaveDelivery that left events after
	// its Cursor (the now it was given), or, when an event recorded after its Cursor woke it
	// (or Create or Resume did), since then by the clock of the store's writer, or since the
	// now of the first Due that found it so if that is earlier: so an endpoint whose turn ended
	// with events left goes after those that were woken meanwhile. Endpoints due since the
	// same instant come in creation order.
	//
	// A pass with nothing due costs the same however many tenants and endpoints the store
	// holds: a store keeps what is due in an index, which recording an event, Create,
	// SaveDelivery, Resume and Delete keep up to date, never by visiting every tenant.
	//
	// Under concurrent writes no wake-up is lost: once the write that records an event has
	// committed, every endpoint of its tenant that is not failing and whose Cursor the event
	// follows is due (from its NextAttempt, if it has one), whatever SaveDelivery, Resume,
	// Create or Due runs meanwhile, until a SaveDelivery moves its Cursor to or past that event
	// or marks it failing. Create with a Cursor that events follow, and Resume with events
	// after the Cursor, make the endpoint due. An endpoint whose events after its Cursor were
	// all removed by Events.DeleteExpired may still be returned until its next SaveDelivery.
	// Due may write (it records from when the endpoints it finds woken are due). What it
	// returns is a snapshot: another instance may lease an endpoint returned before the
	// caller does (Lease then says ErrConflict).
	Due(ctx context.Context, now time.Time, limit int) ([]WebhookEndpoint, error)
}

// WebhookWakeUps is an optional interface of a Webhooks whose writes all happen in this
// process (memstore's): WakeUps returns a channel that is closed once an endpoint may have
// become due after the call (an event recorded after its cursor, Create, Resume). A
// webhooks.Deliverer's Run asks Due again at once then, instead of at its next interval. A
// store without it (sqlstore, whose writers may be other instances; any store wrapped by
// otelstore) is asked every interval.
type WebhookWakeUps interface {
	WakeUps() <-chan struct{}
}
