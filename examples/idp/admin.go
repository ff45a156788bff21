package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// tenantCreate is "idp tenant create <id> [--name N]".
func tenantCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp tenant create", flag.ContinueOnError)
	name := fs.String("name", "", "the tenant's display name")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) != 1 {
		return &cli.UsageError{Msg: `tenant create takes one tenant id, such as: idp tenant create acme --name "Acme Corp"`}
	}
	if !store.ValidTenantID(pos[0]) {
		return &cli.UsageError{Msg: fmt.Sprintf("%q is not a tenant id: "+
			"use 1 to 63 of a-z, 0-9, '-' and '_', starting with a letter or a digit", pos[0])}
	}
	if err := store.CheckDisplayName(*name); err != nil {
		return &cli.UsageError{Msg: "--name: " + strings.TrimSuffix(err.Error(), ": "+store.ErrInvalid.Error())}
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return createTenant(ctx, d.Tenants, pos[0], *name, stdout)
}

// createTenant creates the tenant id and prints tenant=<id>.
func createTenant(ctx context.Context, tenants store.Tenants, id, name string, stdout io.Writer) error {
	err := tenants.Create(ctx, store.Tenant{ID: id, DisplayName: name, Created: time.Now()})
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("tenant %q already exists", id)
	}
	if err != nil {
		return fmt.Errorf("creating tenant %q: %w", id, err)
	}
	fmt.Fprintf(stdout, "tenant=%s\n", id)
	return nil
}

// apikeyCreate is "idp apikey create --tenant T [--name N]".
func apikeyCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp apikey create", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant the key may use (required)")
	name := fs.String("name", "", `a label for people, such as "Entra ID provisioning"`)
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("apikey create: unexpected argument %q; the tenant goes in --tenant", pos[0])}
	}
	if *tenant == "" {
		return &cli.UsageError{Msg: "apikey create needs --tenant, such as: idp apikey create --tenant acme"}
	}
	if !store.ValidTenantID(*tenant) {
		return &cli.UsageError{Msg: fmt.Sprintf("--tenant %q is not a tenant id", *tenant)}
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return issueKey(ctx, d.Backend, *tenant, *name, stdout)
}

// issueKey issues a SCIM API key for tenant and prints api_key_id=… and scim_api_key=…. A tenant
// that is not in the store is refused, as every command that takes --tenant refuses it.
func issueKey(ctx context.Context, b store.Backend, tenant, name string, stdout io.Writer) error {
	if err := requireTenant(ctx, b.Tenants, tenant); err != nil {
		return err
	}
	secret, key, err := scimsvc.IssueAPIKey(ctx, b.APIKeys, scimsvc.KeySpec{Name: name, Tenants: []string{tenant}})
	if err != nil {
		return fmt.Errorf("issuing an API key: %w", err)
	}
	fmt.Fprintf(stdout, "api_key_id=%s\nscim_api_key=%s\n", key.ID, secret)
	return nil
}

// apikeyRevoke is "idp apikey revoke <key id>".
func apikeyRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp apikey revoke", flag.ContinueOnError)
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) != 1 {
		return &cli.UsageError{Msg: "apikey revoke takes one key id, such as: idp apikey revoke key_01k…"}
	}
	if !strings.HasPrefix(pos[0], "key_") {
		return &cli.UsageError{Msg: fmt.Sprintf("%q is not an API key id: ids start with key_ (api_key_id= when the key was created)", pos[0])}
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return revokeKey(ctx, d.APIKeys, pos[0], stdout)
}

// revokeKey revokes the key id and prints api_key_id=… and revoked_at=… (the first revocation's
// time, for a key already revoked).
func revokeKey(ctx context.Context, keys store.APIKeys, id string, stdout io.Writer) error {
	err := scimsvc.RevokeAPIKey(ctx, keys, id, time.Now())
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("there is no API key %q in this store", id)
	}
	if err != nil {
		return fmt.Errorf("revoking API key %q: %w", id, err)
	}
	k, err := keys.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("reading API key %q: %w", id, err)
	}
	fmt.Fprintf(stdout, "api_key_id=%s\nrevoked_at=%s\n", k.ID, k.RevokedAt.UTC().Format(time.RFC3339))
	return nil
}

// openAdminDB opens the store of an admin command, which must exist (openExistingDB), warning on
// stderr when it does not persist.
func openAdminDB(ctx context.Context, db string, stderr io.Writer) (*database, error) {
	d, err := openExistingDB(ctx, db)
	if err != nil {
		return nil, err
	}
	if !d.persistent {
		fmt.Fprintf(stderr, "idp: warning: -db %s is an empty store that lives only while this command runs; "+
			"nothing it does is kept; use -db sqlite:PATH or postgres://…\n", db)
	}
	return d, nil
}
