package main

import (
	"fmt"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// defaultDB is the -db every command uses unless told otherwise.
const defaultDB = "memory"

// dbUsage is the help text of -db.
const dbUsage = `the store: "memory" (sqlite:PATH and postgres://… are to come)`

// database is an open store.
type database struct {
	store.Backend
	// persistent reports whether what is written outlives the process.
	persistent bool
	// kek is the key-encryption key: it encrypts the signing keys in the store, and the
	// pepper and the cookie key derive from it.
	kek []byte
	// close releases the store.
	close func() error
}

// openDB opens the store that a -db value names. Only "memory" exists for now.
func openDB(db string) (*database, error) {
	switch db {
	case "memory":
		return &database{Backend: memstore.New().Backend(), kek: randomKEK(), close: func() error { return nil }}, nil
	}
	return nil, &cli.UsageError{Msg: fmt.Sprintf(
		`-db %q is not supported: the one store for now is "memory" (sqlite:PATH and postgres://… are to come)`, db)}
}
