package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/oidc2fa"
)

// defaultRotateBatch is how many tenants "idp keys rotate" rotates at a time when --batch is not
// given.
const defaultRotateBatch = 500

// keyRotate is "idp keys rotate [--tenant T | --after T] [--batch N]" (also "idp key rotate").
// Every tenant's keys are rotated in batches of tenants, each batch ending with a line that
// names the last tenant done, so that a rotation that stopped resumes with --after.
func keyRotate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp keys rotate", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "rotate only this tenant's keys (default: every tenant's)")
	after := fs.String("after", "", "resume a rotation of every tenant after this tenant (as printed by the run that stopped)")
	batch := fs.Int("batch", defaultRotateBatch, "how many tenants to rotate at a time")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("keys rotate: unexpected argument %q; a tenant goes in --tenant", pos[0])}
	}
	if *tenant != "" {
		if err := checkTenantFlag("keys rotate", *tenant); err != nil {
			return err
		}
		if *after != "" {
			return &cli.UsageError{Msg: "keys rotate: --after resumes a rotation of every tenant; it does not go with --tenant"}
		}
	}
	if *batch < 1 {
		return &cli.UsageError{Msg: fmt.Sprintf("keys rotate: --batch must be at least 1, not %d", *batch)}
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
	signsAt := time.Now().Add(oidc2fa.DefaultRotationDelay).UTC().Format(time.RFC3339)
	if *tenant != "" {
		kids, err := ring.RotateTenant(ctx, *tenant)
		if err != nil {
			return fmt.Errorf("rotating the signing keys of %q: %w", *tenant, err)
		}
		printKIDs(stdout, kids)
		fmt.Fprintf(stdout, "signs_from=%s\n", signsAt)
		return nil
	}
	total := 0
	for next := *after; ; {
		kids, last, err := ring.RotateBatch(ctx, next, *batch)
		printKIDs(stdout, kids)
		total += len(kids)
		if last != "" && last != next {
			fmt.Fprintf(stdout, "rotated_through=%s\n", last)
		}
		if err != nil {
			resume := "idp keys rotate"
			if last != "" {
				resume += " --after " + shellQuote(last)
			}
			return fmt.Errorf("rotating the signing keys after %q: %w; run %q to go on", last, err, resume)
		}
		if last == "" {
			break
		}
		next = last
	}
	fmt.Fprintf(stdout, "new_keys=%d\nsigns_from=%s\n", total, signsAt)
	return nil
}

// printKIDs prints new_kid=… for each kid.
func printKIDs(w io.Writer, kids []string) {
	for _, kid := range kids {
		fmt.Fprintf(w, "new_kid=%s\n", kid)
	}
}
