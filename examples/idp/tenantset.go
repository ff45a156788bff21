package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/store"
)

// tenantLook is what "idp tenant set" changes: a nil field is left as it is.
type tenantLook struct {
	displayName, accentColor, defaultLanguage *string
	logo                                      *[]byte // empty: remove the logo
}

// tenantSet is "idp tenant set --tenant T [--display-name N] [--logo FILE] [--accent-color
// #RRGGBB] [--default-language L]".
func tenantSet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp tenant set", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant to change (required)")
	fs.String("display-name", "", "the tenant's name for people, the heading of its sign-in pages")
	fs.String("logo", "", `a PNG, JPEG, WebP or SVG file of at most 256 KiB shown on the sign-in pages; "" removes the logo`)
	fs.String("accent-color", "", `the colour of the buttons, #RRGGBB, with a contrast of at least 4.5:1 with the page and with white; "" for visid's`)
	fs.String("default-language", "", `the BCP 47 tag of the pages' language when the browser asks for none they have, such as de or fr-CH; "" for none`)
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("tenant set: unexpected argument %q; the tenant goes in --tenant", pos[0])}
	}
	if *tenant == "" {
		return &cli.UsageError{Msg: "tenant set needs --tenant, such as: idp tenant set --tenant acme --accent-color '#0b5d3b'"}
	}
	if !store.ValidTenantID(*tenant) {
		return &cli.UsageError{Msg: fmt.Sprintf("--tenant %q is not a tenant id", *tenant)}
	}
	look, err := parseTenantLook(fs)
	if err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return setTenantLook(ctx, d.Tenants, *tenant, look, stdout)
}

// parseTenantLook reads the look flags that were given and checks their values, so that a bad
// value is refused, naming its flag, before the store is opened.
func parseTenantLook(fs *flag.FlagSet) (tenantLook, error) {
	var look tenantLook
	var errs []error
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		bad := func(err error) {
			msg := strings.TrimSuffix(err.Error(), ": "+store.ErrInvalid.Error())
			errs = append(errs, fmt.Errorf("--%s: %s", f.Name, msg))
		}
		switch f.Name {
		case "display-name":
			if err := store.CheckDisplayName(v); err != nil {
				bad(err)
			}
			look.displayName = &v
		case "accent-color":
			c, err := store.CheckAccentColor(v)
			if err != nil {
				bad(err)
			}
			look.accentColor = &c
		case "default-language":
			l, err := store.CheckLanguage(v)
			if err != nil {
				bad(err)
			}
			look.defaultLanguage = &l
		case "logo":
			data := []byte{}
			if v != "" {
				var err error
				if data, err = readLogo(v); err != nil {
					errs = append(errs, fmt.Errorf("--logo %s: %w", v, err))
					return
				}
				if _, err := store.CheckLogo(data); err != nil {
					bad(err)
				}
			}
			look.logo = &data
		}
	})
	if len(errs) > 0 {
		return look, &cli.UsageError{Msg: errors.Join(errs...).Error()}
	}
	if look == (tenantLook{}) {
		return look, &cli.UsageError{Msg: "tenant set needs at least one of --display-name, --logo, --accent-color and --default-language"}
	}
	return look, nil
}

// readLogo reads the logo file name, refusing one larger than store.MaxLogoSize without reading
// all of it.
func readLogo(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, store.MaxLogoSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > store.MaxLogoSize {
		return nil, fmt.Errorf("the file is larger than %d KiB, the most a logo may be", store.MaxLogoSize>>10)
	}
	return data, nil
}

// setTenantLook changes what look sets of the tenant and prints the tenant's line, as tenant
// list does. The change is recorded as tenant.updated (under the command's store.Change).
func setTenantLook(ctx context.Context, tenants store.Tenants, id string, look tenantLook, stdout io.Writer) error {
	t, err := tenants.Update(ctx, id, func(t *store.Tenant) error {
		if look.displayName != nil {
			t.DisplayName = *look.displayName
		}
		if look.logo != nil {
			t.Logo = *look.logo
		}
		if look.accentColor != nil {
			t.AccentColor = *look.accentColor
		}
		if look.defaultLanguage != nil {
			t.DefaultLanguage = *look.defaultLanguage
		}
		return nil
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return noTenant(id)
	case errors.Is(err, store.ErrInvalid):
		return fmt.Errorf("tenant %q: %s", id, strings.TrimSuffix(err.Error(), ": "+store.ErrInvalid.Error()))
	case err != nil:
		return fmt.Errorf("changing tenant %q: %w", id, err)
	}
	printTenant(stdout, t)
	return nil
}

// printTenant prints a tenant's line: tenant=… name="…" created=…, then what it has of its look:
// logo=<media type> accent_color=#rrggbb default_language=<tag>.
func printTenant(stdout io.Writer, t *store.Tenant) {
	var b strings.Builder
	fmt.Fprintf(&b, "tenant=%s name=%q created=%s", t.ID, t.DisplayName, formatTime(t.Created))
	if t.LogoType != "" {
		fmt.Fprintf(&b, " logo=%s", t.LogoType)
	}
	if t.AccentColor != "" {
		fmt.Fprintf(&b, " accent_color=%s", t.AccentColor)
	}
	if t.DefaultLanguage != "" {
		fmt.Fprintf(&b, " default_language=%s", t.DefaultLanguage)
	}
	b.WriteString("\n")
	_, _ = io.WriteString(stdout, b.String())
}
