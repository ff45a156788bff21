package sqlstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
	"github.com/visid/visid/store/sqlstore"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "visid-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "visid.db"))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		panic(err)
	}
	b := st.Backend()
	if err := b.Tenants.Create(ctx, store.Tenant{ID: "acme"}); err != nil {
		panic(err)
	}
	u, err := b.Users.Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true})
	if err != nil {
		panic(err)
	}
	_, err = b.Users.Create(ctx, "acme", store.User{UserName: "ANN@example.com"})
	fmt.Println("duplicate userName:", err)

	f, err := filter.Parse(`userName eq "ANN@example.com"`, schema.User())
	if err != nil {
		panic(err)
	}
	page, err := b.Users.List(ctx, "acme", store.Query{Filter: f, StartIndex: 1, Count: 100})
	if err != nil {
		panic(err)
	}
	fmt.Println(page.TotalResults, page.Resources[0].ID == u.ID)
	// Output:
	// duplicate userName: userName "ANN@example.com": conflict
	// 1 true
}

func ExampleNew() {
	dir, err := os.MkdirTemp("", "visid-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// The host opens the database; the Store uses it and leaves closing it to the host.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "visid.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	kek := make([]byte, 32) // in a real deployment: 32 secret random bytes, kept outside the database
	st, err := sqlstore.New(sqlstore.Config{DB: db, KeyEncryptionKey: kek})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := st.Migrate(ctx); err != nil {
		panic(err)
	}
	fmt.Println(st.Dialect())

	keys := st.SigningKeys()
	err = keys.Add(ctx, store.SigningKey{ID: "k1", Tenant: "acme", Algorithm: "EdDSA", PrivateKey: []byte("PKCS #8 DER"), Created: time.Now()})
	if err != nil {
		panic(err)
	}
	var sealed []byte
	if err := db.QueryRow(`SELECT private_key FROM signing_keys WHERE id = 'k1'`).Scan(&sealed); err != nil {
		panic(err)
	}
	fmt.Println("stored in the clear:", bytes.Contains(sealed, []byte("PKCS #8 DER")))
	ks, err := keys.List(ctx, "acme")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %s\n", ks[0].ID, ks[0].PrivateKey)
	// Output:
	// SQLite
	// stored in the clear: false
	// k1 PKCS #8 DER
}
