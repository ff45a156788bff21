package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// enrollLink is "idp enroll-link --tenant T --user U": it makes a one-time link with which the
// user sets up (or replaces) a picture password, for an administrator to hand over.
func enrollLink(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp enroll-link", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the user's tenant (required)")
	user := fs.String("user", "", "the user: userName, primary email or id (required)")
	baseFlag := fs.String("base-url", "http://localhost:8080", "the URL the service is reached at")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	if err := checkTenantFlag("enroll-link", *tenant); err != nil {
		return err
	}
	if *user == "" {
		return &cli.UsageError{Msg: "enroll-link needs --user: the user's userName, primary email or id"}
	}
	base, err := parseBaseURL(*baseFlag)
	if err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return makeEnrollLink(ctx, d.Backend, base, *tenant, *user, stdout)
}

// makeEnrollLink makes an enrollment link for user of tenant and prints enrollment_url=… and
// expires=… lines.
func makeEnrollLink(ctx context.Context, b store.Backend, base, tenant, user string, stdout io.Writer) error {
	// The link needs only the stores and the authenticator's kind: this picture login hashes
	// nothing, so its pepper is a throwaway.
	auth, err := newPicture(b, picture.Pepper{ID: "unused", Key: randomKEK()}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		return err
	}
	link, err := oidc2fa.NewEnrollmentLink(ctx, oidcConfig(b, base, auth, slog.New(slog.DiscardHandler)), oidc2fa.EnrollmentRequest{
		Tenant: tenant,
		User:   user,
	})
	switch {
	case errors.Is(err, oidc2fa.ErrUnknownUser):
		if _, terr := b.Tenants.Get(ctx, tenant); errors.Is(terr, store.ErrNotFound) {
			return noTenant(tenant)
		}
		return fmt.Errorf("tenant %q has no active user with the userName, primary email or id %q", tenant, user)
	case errors.Is(err, store.ErrNotFound):
		return noTenant(tenant)
	case err != nil:
		return fmt.Errorf("making the enrollment link: %w", err)
	}
	fmt.Fprintf(stdout, "enrollment_url=%s\nexpires=%s\n", link.URL, link.Expires.UTC().Format(time.RFC3339))
	return nil
}
