package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// TestDueWakeUpDuringSaveDelivery plays, on PostgreSQL, the interleaving in which a wake-up
// could be lost under READ COMMITTED: a SaveDelivery has found its endpoint caught up, then
// an event is recorded and committed, and a Due turns the tenant's wake-up into due endpoints,
// all before the SaveDelivery writes that the endpoint is not due. The Due must wait for the
// SaveDelivery's row and find the endpoint due after it.
func TestDueWakeUpDuringSaveDelivery(t *testing.T) {
	dsn := os.Getenv("VISID_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("VISID_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	var r [6]byte
	rand.Read(r[:])
	schema := fmt.Sprintf("t_%x", r)
	s := openBench(t, postgresDialect, dsn, schema, true)
	t.Cleanup(func() {
		s.Close()
		if db, err := sql.Open("pgx", dsn); err == nil {
			db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	s.kek = make([]byte, 32)
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))
	ws := s.Webhooks()
	e, err := ws.Create(ctx, store.WebhookEndpoint{Tenant: "acme", URL: "https://hooks.example.com/", Secret: "whsec_x"})
	require.NoError(t, err)
	event := store.Event{Type: store.EventSecondFactorSucceeded, Actor: "client_a", SubjectKind: store.SubjectUser, SubjectID: "user_a"}
	require.NoError(t, s.Events().Append(ctx, "acme", event))
	now := time.Now()
	due, err := ws.Due(ctx, now, 10)
	require.NoError(t, err)
	require.Len(t, due, 1, "the first event makes it due")
	page, err := s.Events().List(ctx, "acme", e.Delivery.Cursor, 10)
	require.NoError(t, err)

	dueDone := make(chan []store.WebhookEndpoint, 1)
	s.savedChecked = func() {
		s.savedChecked = nil
		require.NoError(t, s.Events().Append(ctx, "acme", event)) // committed now
		go func() {
			due, err := ws.Due(ctx, now, 10)
			assert.NoError(t, err)
			dueDone <- due
		}()
		time.Sleep(300 * time.Millisecond) // the Due takes its wake-up and reaches the endpoint's row
	}
	require.NoError(t, ws.Lease(ctx, "acme", e.ID, "d", now, now.Add(time.Minute)))
	require.NoError(t, ws.SaveDelivery(ctx, "acme", e.ID, "d", now, store.WebhookDelivery{Cursor: page[0].Cursor}))
	<-dueDone
	require.NoError(t, ws.Lease(ctx, "acme", e.ID, "d", now, now))
	due, err = ws.Due(ctx, now, 10)
	require.NoError(t, err)
	require.Len(t, due, 1, "the second event, recorded while SaveDelivery ran, keeps the endpoint due")
	assert.Equal(t, page[0].Cursor, due[0].Delivery.Cursor)
}
