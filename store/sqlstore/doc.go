// Package sqlstore is visid's database/sql backend: every store contract on SQLite
// (modernc.org/sqlite, pure Go) or PostgreSQL (github.com/jackc/pgx/v5/stdlib), with SCIM
// filters run in the database.
//
//	st, err := sqlstore.Open(ctx, "sqlite:/var/lib/visid/visid.db") // or "postgres://…"
//	if err != nil { … }
//	defer st.Close()
//	if err := st.Migrate(ctx); err != nil { … } // safe from several instances at once
//	backend := st.Backend() // pass its fields to scimsvc.Config and oidc2fa.Config
//
// A host that opens the database itself passes it in a Config (New opens no connection), and
// sets KeyEncryptionKey to store signing keys:
//
//	st, err := sqlstore.New(sqlstore.Config{DB: db, KeyEncryptionKey: kek}) // kek: 32 bytes
//
// # Schema
//
// Migrate applies the versioned migrations embedded from migrations/sqlite and
// migrations/postgres and records them in schema_migrations. A user is a row of users holding
// its JSON document (store.User without Groups) and the columns its lookups and rules need:
// tenant, id, a seq column that gives the creation order, user_name_fold (schema.Fold of the
// userName, unique per tenant) and external_id. A group is a row of groups likewise (its
// document without Members, display_name_fold), and each membership a row of members, in the
// group's order. The attrs table (see dialect.go) holds every attribute value of every user and
// group, derived ones (a user's groups, a group's members' userNames) included; every write of a
// user or a group writes the rows that changed, its own and those of the resources whose derived
// values it changes, in the same transaction. A group's members rows take the member's position
// as their idx, so that deleting or renaming a user touches its own element of each of its
// groups, not the whole list. A filter becomes SQL over attrs (filtersql.go). A list is ordered
// by seq, or by a sort key and seq: userName's and displayName's folded columns, read in order
// from (tenant, column, seq) indexes, or any other sortable attribute's value read from attrs per
// row (list.go). A keyset position (store.Query.After, Before) is a condition on (key, seq) that
// bounds the index range, so the page after a million rows reads as few rows as the first.
// Clients, API keys, codes, interactions, picture credentials, passkeys and signing keys have a
// table each. Instants are stored as Unix nanoseconds and read back in UTC.
//
// # Concurrency
//
// Every write is one transaction. On SQLite it begins with BEGIN IMMEDIATE, so it holds the
// write lock from its first read; a Store's writers take turns, and other processes wait for the
// lock up to the busy timeout. On PostgreSQL (READ COMMITTED) writes to a tenant's users and
// groups take a transaction-scoped advisory lock of the tenant, since one can change the attrs
// rows of others, and read-modify-write locks its row (SELECT … FOR UPDATE). Codes.Consume is
// one UPDATE … WHERE NOT used RETURNING, Interactions.Take one DELETE … RETURNING and
// PictureCredentials.AddFailure one UPDATE … RETURNING; Passkeys.Use is an UPDATE … WHERE
// sign_count = the old count, and Passkeys.Create locks its user's row before it counts the
// user's passkeys. A transaction that fails on a deadlock or a busy database is run again, a
// few times at most (an Update's function with it). Reads of several statements run in one
// read-only transaction (REPEATABLE READ on PostgreSQL), so they see one state.
//
// Signing keys' private keys are sealed with AES-256-GCM under Config.KeyEncryptionKey, the
// key's id bound as additional data; they are never written in the clear.
//
// Running the SQL stores in production (-db, migrations, the key-encryption key, backups) is
// described in https://github.com/visid/visid/blob/main/docs/production.md.
package sqlstore
