package store_test

import (
	"context"
	"fmt"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// A tenant's look is set with Tenants.Update, under a Change so that the store records it as a
// tenant.updated event; CheckTenant refuses what the pages could not show well.
func ExampleCheckTenant() {
	b := memstore.New().Backend()
	ctx := store.WithChange(context.Background(), store.Change{Actor: "admin"})
	if err := b.Tenants.Create(ctx, store.Tenant{ID: "acme"}); err != nil {
		panic(err)
	}
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 1"><rect width="4" height="1"/></svg>`)
	t, err := b.Tenants.Update(ctx, "acme", func(t *store.Tenant) error {
		t.DisplayName, t.Logo, t.AccentColor, t.DefaultLanguage = "Acme Corp", svg, "#0B5D3B", "de-ch"
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(t.LogoType, t.AccentColor, t.DefaultLanguage)

	_, err = b.Tenants.Update(ctx, "acme", func(t *store.Tenant) error { t.AccentColor = "#8899aa"; return nil })
	fmt.Println(err)

	events, err := b.Events.List(ctx, "acme", "", 10)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(events), events[0].Type, string(events[0].Data))
	// Output:
	// image/svg+xml #0b5d3b de-CH
	// tenant "acme": accent colour #8899aa has a contrast ratio of 2.69:1 with the page background (#f4f6f8); WCAG AA requires at least 4.5:1: invalid
	// 1 tenant.updated {"id":"acme","display_name":"Acme Corp","logo_type":"image/svg+xml","logo_size":92,"logo_sha256":"df08da65929f8b8604c9c5ea9b3b990cad254f6defef8ff3ef30cfcb6f0e2dbc","accent_color":"#0b5d3b","default_language":"de-CH","second_factor":"picture","changed":["display_name","logo","accent_color","default_language"]}
}
