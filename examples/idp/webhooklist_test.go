package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/store"
)

// TestWebhookLine: webhook list says of each endpoint when its next attempt is due: now while
// it delivers, the time of the retry while it retries, and on-resume once delivery gave up.
func TestWebhookLine(t *testing.T) {
	next := time.Date(2026, 11, 27, 19, 4, 5, 0, time.FixedZone("CET", 3600))
	base := store.WebhookEndpoint{ID: "webhook_01", URL: "https://hooks.example.com/visid"}
	for _, tc := range []struct {
		name string
		d    store.WebhookDelivery
		want string
	}{
		{"delivering", store.WebhookDelivery{Cursor: "evt_acme_01"},
			`webhook_id=webhook_01 url=https://hooks.example.com/visid types=all status=delivering cursor=evt_acme_01 attempts=0 next_attempt=now last_error=""`},
		{"retrying", store.WebhookDelivery{Cursor: "evt_acme_01", Attempts: 3, NextAttempt: next, LastError: "503"},
			`webhook_id=webhook_01 url=https://hooks.example.com/visid types=all status=retrying cursor=evt_acme_01 attempts=3 next_attempt=2026-11-27T18:04:05Z last_error="503"`},
		{"failing", store.WebhookDelivery{Cursor: "evt_acme_01", Attempts: 40, NextAttempt: next, Failing: true, LastError: "timeout"},
			`webhook_id=webhook_01 url=https://hooks.example.com/visid types=all status=failing cursor=evt_acme_01 attempts=40 next_attempt=on-resume last_error="timeout"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := base
			e.Delivery = tc.d
			assert.Equal(t, tc.want, webhookLine(e))
		})
	}
}
