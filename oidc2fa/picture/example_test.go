package picture_test

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

func ExampleNew() {
	ctx := context.Background()
	b := memstore.New().Backend()
	_ = b.Tenants.Create(ctx, store.Tenant{ID: "acme"})
	ann, _ := b.Users.Create(ctx, "acme", store.User{UserName: "ann", Active: true})

	pepper := make([]byte, 32) // in production: a secret kept out of the store
	_, _ = rand.Read(pepper)
	auth, err := picture.New(picture.Config{
		Credentials: b.Pictures,
		Peppers:     []picture.Pepper{{ID: "2026-11", Key: pepper}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// An administrator's tool may enroll a user; people enroll through the enrollment pages.
	points := []picture.Point{{X: 700, Y: 78}, {X: 100, Y: 158}, {X: 420, Y: 495}, {X: 900, Y: 515}, {X: 265, Y: 700}}
	if err := auth.Enroll(ctx, "acme", ann.ID, "harbour", points); err != nil {
		fmt.Println(err)
		return
	}
	c, _ := b.Pictures.Get(ctx, "acme", ann.ID)
	locked, _ := auth.Locked(ctx, "acme", ann.ID)
	fmt.Println(c.Image, c.Points, c.Tolerance, c.ArgonMemory, locked)
	// Output: harbour 5 20 19456 false
}
