package webhooks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/visid/visid/store"
)

// Defaults of Config.
const (
	// DefaultTimeout bounds one request, the response's headers included.
	DefaultTimeout = 10 * time.Second
	// DefaultRetryFor is how long the deliverer retries one event before it marks the
	// endpoint failing.
	DefaultRetryFor = 72 * time.Hour
	// DefaultLease is how long an instance holds an endpoint's delivery before it must renew
	// it (before each request) or let it go (after each pass). An instance that dies while it
	// delivers keeps the endpoint from the others at most this long.
	DefaultLease = 30 * time.Second
	// DefaultBatch is the most events sent to one endpoint in one turn.
	DefaultBatch = 100
	// DefaultWorkers is how many endpoints a Deliverer sends to at once.
	DefaultWorkers = 8
	// DefaultTurn is how long an endpoint's turn may go on before it yields to the others.
	DefaultTurn = time.Second
	// PassSize is the most endpoints one RunOnce takes (Webhooks.Due's limit); the next pass
	// takes the rest.
	PassSize = 1000
)

// The waits between attempts at one event: FirstRetry after the first failure, doubling up to
// MaxRetryWait, each less a random part of up to a half (jitter), so that many endpoints that
// failed together do not retry together.
const (
	FirstRetry   = 5 * time.Second
	MaxRetryWait = time.Hour
)

// Actor is the actor of the events the deliverer records (webhook.failing).
const Actor = "webhooks"

// Config configures a Deliverer. Events and Webhooks are required; every other field has the
// default its comment gives.
type Config struct {
	Events   store.Events
	Webhooks store.Webhooks
	// Tenants is not used: the Deliverer asks Webhooks.Due for the endpoints that are due
	// across tenants instead of visiting each tenant. It may be nil; the field stays so that
	// hosts that set it build unchanged.
	Tenants store.Tenants
	// Client sends the requests. nil: a client with DefaultTimeout that follows no redirect
	// (a 3xx answer is a failure), connects directly (no proxy from the environment) and
	// refuses to connect to an address that is not public (DialControl) unless
	// AllowPrivateTargets is set. A Client of the host's should do the same: the Deliverer
	// cannot check the connections of a Client it did not build.
	Client *http.Client
	// AllowPrivateTargets lets the default client connect to loopback, private, link-local
	// and other internal addresses (ErrPrivateTarget): for development and tests only.
	AllowPrivateTargets bool
	// RetryFor is how long one event is retried, from its first failure; then the endpoint is
	// marked failing (and a webhook.failing event recorded) until Webhooks.Resume. 0:
	// DefaultRetryFor.
	RetryFor time.Duration
	// Lease is how long a turn holds an endpoint before renewing its lease; it must be longer
	// than a request may take. 0: DefaultLease.
	Lease time.Duration
	// Batch is the most events one turn sends to one endpoint. 0: DefaultBatch.
	Batch int
	// Workers is how many endpoints the Deliverer sends to at once, each in a goroutine of
	// its own for the length of its turn, so that a slow or failing endpoint holds up one
	// worker and no other endpoint. 0: DefaultWorkers.
	Workers int
	// Turn bounds an endpoint's turn: it ends after Batch events, or before the next request
	// once Turn has passed since it began, and the endpoint goes after the endpoints that
	// became due meanwhile (Webhooks.Due's order). A request under way is never cut short
	// (the Client's timeout bounds it). 0: DefaultTurn.
	Turn time.Duration
	// Holder names this deliverer in the endpoints' leases; every instance needs its own.
	// "": a random name.
	Holder string
	// Now is the clock. nil: time.Now.
	Now func() time.Time
	// Logger receives a line for each failed delivery (never the secret or the body). nil:
	// slog.Default().
	Logger *slog.Logger
}

// Deliverer posts each tenant's events to its webhook endpoints, signed (SetHeaders), at
// least once and in the log's order per endpoint. Several Deliverers (one an instance) may
// share a store: an endpoint's lease lets one of them send to it at a time.
type Deliverer struct {
	cfg    Config
	client *http.Client
	now    func() time.Time
	log    *slog.Logger

	mu       sync.Mutex
	inFlight map[endpointKey]bool // the endpoints a worker of this Deliverer has
}

// endpointKey names an endpoint.
type endpointKey struct{ tenant, id string }

// NewDeliverer returns the Deliverer of cfg. It starts nothing: call Run, or RunOnce on the
// host's own schedule.
func NewDeliverer(cfg Config) (*Deliverer, error) {
	if cfg.Events == nil || cfg.Webhooks == nil {
		return nil, errors.New("webhooks: Config.Events and Webhooks are required")
	}
	if cfg.RetryFor < 0 || cfg.Lease < 0 || cfg.Batch < 0 || cfg.Workers < 0 || cfg.Turn < 0 {
		return nil, errors.New("webhooks: Config.RetryFor, Lease, Batch, Workers and Turn must not be negative")
	}
	d := &Deliverer{cfg: cfg, client: cfg.Client, now: cfg.Now, log: cfg.Logger, inFlight: map[endpointKey]bool{}}
	if d.client == nil {
		d.client = defaultClient(cfg.AllowPrivateTargets)
	}
	if d.cfg.RetryFor == 0 {
		d.cfg.RetryFor = DefaultRetryFor
	}
	if d.cfg.Lease == 0 {
		d.cfg.Lease = DefaultLease
	}
	if d.cfg.Batch == 0 {
		d.cfg.Batch = DefaultBatch
	}
	if d.cfg.Workers == 0 {
		d.cfg.Workers = DefaultWorkers
	}
	if d.cfg.Turn == 0 {
		d.cfg.Turn = DefaultTurn
	}
	if d.cfg.Holder == "" {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never returns an error
		d.cfg.Holder = "deliverer-" + hex.EncodeToString(b[:])
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	return d, nil
}

// defaultClient is the Client of a Config without one: see Config.Client.
func defaultClient(allowPrivateTargets bool) *http.Client {
	dialer := &net.Dialer{Timeout: DefaultTimeout, KeepAlive: 30 * time.Second}
	if !allowPrivateTargets {
		dialer.Control = DialControl
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a proxy's address is what the dialer would check, not the endpoint's
	tr.DialContext = dialer.DialContext
	return &http.Client{
		Timeout:       DefaultTimeout,
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Run delivers until ctx is done, and returns ctx's error once its workers have stopped. It
// asks Webhooks.Due for as many endpoints as it has idle workers every interval, and again as
// soon as a worker ends a turn, and gives each endpoint to a worker of its own: a slow
// endpoint holds up its worker and no other endpoint, and an event reaches its endpoints
// within about interval (examples/idp runs it every second). A store that implements
// store.WebhookWakeUps (memstore) is asked again as soon as an endpoint is woken. An endpoint is given to one
// worker at a time, and its lease keeps other instances away meanwhile. A failed Due is logged
// and asked again at the next interval.
func (d *Deliverer) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return errors.New("webhooks: Run needs a positive interval")
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	ended := make(chan error, d.cfg.Workers)
	running := 0
	wakeUps, _ := d.cfg.Webhooks.(store.WebhookWakeUps)
	for {
		var woken <-chan struct{} // nil: the store has no wake-ups
		if wakeUps != nil {
			woken = wakeUps.WakeUps() // before Due, so that no wake-up after it is missed
		}
		if free := d.cfg.Workers - running; free > 0 && ctx.Err() == nil {
			due, err := d.cfg.Webhooks.Due(ctx, d.now(), free)
			if err != nil && ctx.Err() == nil {
				d.log.ErrorContext(ctx, "webhooks: asking for the endpoints due failed", "err", err)
			}
			for _, e := range due {
				if !d.take(e) {
					continue
				}
				running++
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer d.let(e)
					_, err := d.deliver(ctx, e)
					ended <- err
				}()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-woken:
		case err := <-ended:
			running--
			if err != nil && ctx.Err() == nil {
				d.log.ErrorContext(ctx, "webhooks: a delivery turn failed", "err", err)
				// Wait for the next interval rather than ask again at once.
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-t.C:
				}
			}
		}
		for drained := false; !drained; { // the other turns that ended meanwhile
			select {
			case err := <-ended:
				running--
				if err != nil && ctx.Err() == nil {
					d.log.ErrorContext(ctx, "webhooks: a delivery turn failed", "err", err)
				}
			default:
				drained = true
			}
		}
	}
}

// RunOnce makes one pass: it asks Webhooks.Due for up to PassSize endpoints that are due (not
// failing, whose next attempt is due, that another deliverer does not hold, with events after
// their cursor) and gives each a turn, Workers at a time: under its lease, it sends the events
// after the endpoint's cursor, oldest first, until one fails, Batch were sent, Turn has
// passed or there are no more, saving where delivery stands after each. It returns once every
// turn it began has ended, with how many events were delivered. An endpoint leased by another
// deliverer, or in a turn of this one's Run, is passed over.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) {
	due, err := d.cfg.Webhooks.Due(ctx, d.now(), PassSize)
	if err != nil {
		return 0, fmt.Errorf("webhooks: asking for the endpoints due: %w", err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		sent int
		errs []error
	)
	workers := make(chan struct{}, d.cfg.Workers)
	for _, e := range due {
		select {
		case workers <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if !d.take(e) {
			<-workers
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-workers }()
			defer d.let(e)
			n, err := d.deliver(ctx, e)
			mu.Lock()
			defer mu.Unlock()
			sent += n
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return sent, err
	}
	return sent, errors.Join(errs...)
}

// take records that a worker has e, unless one has it already.
func (d *Deliverer) take(e store.WebhookEndpoint) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := endpointKey{e.Tenant, e.ID}
	if d.inFlight[k] {
		return false
	}
	d.inFlight[k] = true
	return true
}

// let records that the worker that had e has ended its turn.
func (d *Deliverer) let(e store.WebhookEndpoint) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.inFlight, endpointKey{e.Tenant, e.ID})
}

// deliver gives e a turn under its lease: it sends e's events until one fails, Batch were
// sent, Turn has passed or none is left, and saves where delivery stands after each (which
// tells the store whether e is still due, and from when).
func (d *Deliverer) deliver(ctx context.Context, e store.WebhookEndpoint) (int, error) {
	holder := d.cfg.Holder
	began := d.now()
	if err := d.cfg.Webhooks.Lease(ctx, e.Tenant, e.ID, holder, began, began.Add(d.cfg.Lease)); err != nil {
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			return 0, nil // another deliverer has it, or it was just deleted
		}
		return 0, fmt.Errorf("webhooks: leasing %s: %w", e.ID, err)
	}
	// Let the endpoint go at the end of the turn (a lease that ends now), so that another
	// instance may take it at once; if the lease was lost meanwhile, this changes nothing.
	defer func() {
		now := d.now()
		_ = d.cfg.Webhooks.Lease(context.WithoutCancel(ctx), e.Tenant, e.ID, holder, now, now)
	}()
	// The stored delivery may have moved since Due: read it under the lease.
	cur, err := d.cfg.Webhooks.Get(ctx, e.Tenant, e.ID)
	if err != nil {
		return 0, fmt.Errorf("webhooks: reading %s: %w", e.ID, err)
	}
	state, saved := cur.Delivery, cur.Delivery
	if state.Failing || d.now().Before(state.NextAttempt) {
		return 0, nil
	}
	page, err := d.cfg.Events.List(ctx, e.Tenant, state.Cursor, d.cfg.Batch)
	if err != nil {
		return 0, fmt.Errorf("webhooks: listing events for %s: %w", e.ID, err)
	}
	sent := 0
	for _, ev := range page {
		if len(cur.Types) > 0 && !slices.Contains(cur.Types, ev.Type) {
			state = store.WebhookDelivery{Cursor: ev.Cursor}
			continue
		}
		now := d.now()
		if sent > 0 && now.Sub(began) >= d.cfg.Turn {
			break // the turn is over: the others go first
		}
		// The lease must outlast the request: renew it before each.
		if err := d.cfg.Webhooks.Lease(ctx, e.Tenant, e.ID, holder, now, now.Add(d.cfg.Lease)); err != nil {
			return sent, d.lost(ctx, e.ID, err)
		}
		failure := d.send(ctx, cur, ev)
		if ctx.Err() != nil {
			return sent, ctx.Err()
		}
		if failure == "" {
			sent++
			state = store.WebhookDelivery{Cursor: ev.Cursor}
			if err := d.save(ctx, cur, state); err != nil {
				return sent, err
			}
			saved = state
			continue
		}
		state = d.failed(state, failure)
		d.log.WarnContext(ctx, "webhooks: delivery failed", "tenant", e.Tenant, "endpoint", e.ID, "event", ev.Cursor,
			"type", ev.Type, "error", failure, "attempts", state.Attempts, "failing", state.Failing)
		return sent, d.save(ctx, cur, state)
	}
	if state != saved || len(page) == 0 {
		// Events passed over for the endpoint's types; or none left after the cursor (Due
		// saw events that Events.DeleteExpired has removed since): the save tells the store
		// the endpoint is caught up.
		return sent, d.save(ctx, cur, state)
	}
	return sent, nil
}

// failed returns the delivery state after a failed attempt at the event after s.Cursor.
func (d *Deliverer) failed(s store.WebhookDelivery, why string) store.WebhookDelivery {
	now := d.now()
	s.Attempts++
	s.LastError = why
	if s.FirstFailure.IsZero() {
		s.FirstFailure = now
	}
	if now.Sub(s.FirstFailure) >= d.cfg.RetryFor {
		s.Failing, s.NextAttempt = true, time.Time{}
		return s
	}
	wait := FirstRetry << min(s.Attempts-1, 20)
	wait = min(wait, MaxRetryWait)
	wait -= time.Duration(mrand.Int64N(int64(wait)/2 + 1))
	s.NextAttempt = now.Add(wait)
	return s
}

// save stores state under the lease; webhook.failing is recorded with it.
func (d *Deliverer) save(ctx context.Context, e *store.WebhookEndpoint, state store.WebhookDelivery) error {
	ctx = store.WithChange(ctx, store.Change{Actor: Actor, Time: d.now()})
	if err := d.cfg.Webhooks.SaveDelivery(ctx, e.Tenant, e.ID, d.cfg.Holder, d.now(), state); err != nil {
		return d.lost(ctx, e.ID, err)
	}
	return nil
}

// lost is the error of a lease lost or a save that failed.
func (d *Deliverer) lost(ctx context.Context, id string, err error) error {
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		d.log.InfoContext(ctx, "webhooks: the lease of an endpoint was lost; another deliverer goes on", "endpoint", id)
		return nil
	}
	return fmt.Errorf("webhooks: saving the delivery to %s: %w", id, err)
}

// payload is the body of a request: the event, with its id.
type payload struct {
	ID        string          `json:"id"`
	Type      store.EventType `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Tenant    string          `json:"tenant"`
	Cursor    string          `json:"cursor"`
	Actor     string          `json:"actor"`
	Subject   subject         `json:"subject"`
	Data      json.RawMessage `json:"data"`
}

type subject struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// MessageID is the webhook-id of an event: the same on every attempt, from every instance.
func MessageID(e store.Event) string { return "evt_" + e.Tenant + "_" + e.Cursor }

// Body returns the JSON body of the request that carries e:
//
//	{"id":"evt_…","type":"user.deactivated","timestamp":"2026-…Z","tenant":"acme",
//	 "cursor":"…","actor":"key_…","subject":{"kind":"user","id":"user_…"},"data":{…}}
//
// id is MessageID(e), the webhook-id header; data is the event's data (store.Event.Data).
func Body(e store.Event) ([]byte, error) {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return json.Marshal(payload{ID: MessageID(e), Type: e.Type, Timestamp: e.Time, Tenant: e.Tenant,
		Cursor: e.Cursor, Actor: e.Actor, Subject: subject{e.SubjectKind, e.SubjectID}, Data: data})
}

// send posts ev to e and returns why it failed, or "" for a 2xx answer.
func (d *Deliverer) send(ctx context.Context, e *store.WebhookEndpoint, ev store.Event) string {
	body, err := Body(ev)
	if err != nil {
		return "the event does not encode"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return "the endpoint URL is not usable"
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "visid-webhooks")
	if err := SetHeaders(req.Header, MessageID(ev), d.now(), body, e.Secret); err != nil {
		return "the endpoint's secret is not usable"
	}
	resp, err := d.client.Do(req)
	if err != nil {
		var timeout interface{ Timeout() bool }
		if errors.As(err, &timeout) && timeout.Timeout() {
			return "timeout"
		}
		if errors.Is(err, ErrPrivateTarget) {
			return "refused: the host is an internal address (allow private targets for development only)"
		}
		return "no answer (connection failed)"
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "status " + strconv.Itoa(resp.StatusCode)
	}
	return ""
}
