package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/oidc2fa"
)

// keyRotate is "idp key rotate [--tenant T]".
func keyRotate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp key rotate", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "rotate only this tenant's keys (default: every tenant's)")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("key rotate: unexpected argument %q; a tenant goes in --tenant", pos[0])}
	}
	if *tenant != "" {
		if err := checkTenantFlag("key rotate", *tenant); err != nil {
			return err
		}
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	if *tenant != "" {
		if err := requireTenant(ctx, d.Backend.Tenants, *tenant); err != nil {
			return err
		}
	}
	ring, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, d.Backend.SigningKeys)
	if err != nil {
		return fmt.Errorf("loading the signing keys: %w", err)
	}
	var kids []string
	if *tenant != "" {
		kids, err = ring.RotateTenant(ctx, *tenant)
	} else {
		kids, err = ring.Rotate(ctx)
	}
	if err != nil {
		return fmt.Errorf("rotating the signing keys: %w", err)
	}
	for _, kid := range kids {
		fmt.Fprintf(stdout, "new_kid=%s\n", kid)
	}
	return nil
}
