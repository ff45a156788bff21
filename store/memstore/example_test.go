package memstore_test

import (
	"context"
	"fmt"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/schema"
)

func ExampleNew() {
	mem := memstore.New()
	ctx := context.Background()
	if err := mem.Tenants().Create(ctx, store.Tenant{ID: "acme"}); err != nil {
		panic(err)
	}
	u, err := mem.Users().Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true})
	if err != nil {
		panic(err)
	}
	_, err = mem.Users().Create(ctx, "acme", store.User{UserName: "ANN@example.com"})
	fmt.Println("duplicate userName:", err)

	f, err := filter.Parse(`userName eq "ANN@example.com"`, schema.User())
	if err != nil {
		panic(err)
	}
	page, err := mem.Users().List(ctx, "acme", store.Query{Filter: f, StartIndex: 1, Count: 100})
	if err != nil {
		panic(err)
	}
	fmt.Println(page.TotalResults, page.Resources[0].ID == u.ID)
	// Output:
	// duplicate userName: userName "ANN@example.com": conflict
	// 1 true
}
