// Package webhooks signs the webhook requests visid sends to a host and verifies them on the
// receiving side, as the Standard Webhooks specification describes
// (https://www.standardwebhooks.com/).
//
// Every request carries three headers:
//
//	webhook-id:        the event's id, the same on every retry of one event (for deduplication)
//	webhook-timestamp: when the request was sent, in Unix seconds
//	webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">
//
// An endpoint's secret is "whsec_" followed by the base64 of 32 random bytes (NewSecret); the
// HMAC key is those bytes. During a rotation a request may carry several space-separated
// signatures, one a secret, and one match is enough.
//
// A receiver written in Go checks a request with Verify before it trusts the body:
//
//	mux.HandleFunc("POST /visid-events", func(w http.ResponseWriter, r *http.Request) {
//		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
//		if err != nil {
//			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
//			return
//		}
//		if err := webhooks.Verify(secret, r.Header, body, time.Now()); err != nil {
//			http.Error(w, "bad signature", http.StatusUnauthorized)
//			return
//		}
//		// body is the event; webhook-id names it, the same on every retry.
//		w.WriteHeader(http.StatusNoContent)
//	})
//
// Verify compares signatures in constant time and refuses a timestamp more than Tolerance (5
// minutes) from the receiver's clock, either way, so a recorded request cannot be replayed
// later. Any Standard Webhooks library in another language verifies visid's requests too.
//
// Events go only to public addresses: AddEndpoint refuses an endpoint whose host is or resolves
// to a loopback, private, link-local or other internal address (ErrPrivateTarget, CheckTarget),
// and the Deliverer checks again every address it connects to, after DNS resolution
// (DialControl), so a name whose answer changes later gets nothing either. Redirects are never
// followed. EndpointSpec.AllowPrivateTargets and Config.AllowPrivateTargets lift the check, for
// development only.
//
// A Deliverer (NewDeliverer, then Run) posts each tenant's events to its endpoints, at least
// once and in order per endpoint. It asks the store for the endpoints due across tenants
// (store.Webhooks.Due, served by an index, so an idle pass costs the same at 100,000 tenants as
// at 10) and sends to Config.Workers endpoints at once, each for a turn of at most Batch events
// or Turn, so a slow or failing receiver holds up no other:
//
//	d, err := webhooks.NewDeliverer(webhooks.Config{Events: b.Events, Webhooks: b.Webhooks})
//	if err != nil {
//		return err
//	}
//	go d.Run(ctx, time.Second) // b is the store.Backend, ctx the service's
//
// The guide to events and webhooks, with a runnable receiver, is https://github.com/visid/visid/blob/main/docs/events-webhooks.md#webhooks.
package webhooks
