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

// tenantChange is what "idp tenant set" changes: a nil field is left as it is.
type tenantChange struct {
	displayName, accentColor, defaultLanguage *string
	logo                                      *[]byte // empty: remove the logo
	secondFactor                              *string // store.Tenant.SecondFactor
}

// The values of --passkeys, and the second-factor policy each sets.
const (
	passkeysAllowed = "allowed" // store.SecondFactorPictureOrPasskey
	passkeysOff     = "off"     // store.SecondFactorPicture
)

// tenantSet is "idp tenant set --tenant T [--display-name N] [--logo FILE] [--accent-color
// #RRGGBB] [--default-language L] [--passkeys allowed|off]".
func tenantSet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp tenant set", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant to change (required)")
	fs.String("display-name", "", "the tenant's name for people, the heading of its sign-in pages")
	fs.String("logo", "", `a PNG, JPEG, WebP or SVG file of at most 256 KiB shown on the sign-in pages; "" removes the logo`)
	fs.String("accent-color", "", `the colour of the buttons, #RRGGBB, with a contrast of at least 4.5:1 with the page and with white; "" for visid's`)
	fs.String("default-language", "", `the BCP 47 tag of the pages' language when the browser asks for none they have, such as de or fr-CH; "" for none`)
	fs.String("passkeys", "", `allowed: the tenant's users may add a passkey as a second way through the second factor; off: the picture password only`)
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
	change, err := parseTenantChange(fs)
	if err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return changeTenant(ctx, d.Tenants, *tenant, change, stdout)
}

// parseTenantChange reads the flags that were given and checks their values, so that a bad
// value is refused, naming its flag, before the store is opened.
func parseTenantChange(fs *flag.FlagSet) (tenantChange, error) {
	var ch tenantChange
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
			ch.displayName = &v
		case "accent-color":
			c, err := store.CheckAccentColor(v)
			if err != nil {
				bad(err)
			}
			ch.accentColor = &c
		case "default-language":
			l, err := store.CheckLanguage(v)
			if err != nil {
				bad(err)
			}
			ch.defaultLanguage = &l
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
			ch.logo = &data
		case "passkeys":
			var policy string
			switch v {
			case passkeysAllowed:
				policy = store.SecondFactorPictureOrPasskey
			case passkeysOff:
				policy = store.SecondFactorPicture
			default:
				errs = append(errs, fmt.Errorf("--passkeys %q: want %s or %s", v, passkeysAllowed, passkeysOff))
				return
			}
			ch.secondFactor = &policy
		}
	})
	if len(errs) > 0 {
		return ch, &cli.UsageError{Msg: errors.Join(errs...).Error()}
	}
	if ch == (tenantChange{}) {
		return ch, &cli.UsageError{Msg: "tenant set needs at least one of --display-name, --logo, --accent-color, --default-language and --passkeys"}
	}
	return ch, nil
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

// changeTenant changes what ch sets of the tenant and prints the tenant's line, as tenant
// list does. The change is recorded as tenant.updated (under the command's store.Change).
func changeTenant(ctx context.Context, tenants store.Tenants, id string, ch tenantChange, stdout io.Writer) error {
	t, err := tenants.Update(ctx, id, func(t *store.Tenant) error {
		if ch.displayName != nil {
			t.DisplayName = *ch.displayName
		}
		if ch.logo != nil {
			t.Logo = *ch.logo
		}
		if ch.accentColor != nil {
			t.AccentColor = *ch.accentColor
		}
		if ch.defaultLanguage != nil {
			t.DefaultLanguage = *ch.defaultLanguage
		}
		if ch.secondFactor != nil {
			t.SecondFactor = *ch.secondFactor
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

// printTenant prints a tenant's line: tenant=… name="…" created=…, then what it has of its look,
// logo=<media type> accent_color=#rrggbb default_language=<tag>, and second_factor=<policy>
// when its policy is not the picture password alone.
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
	if t.SecondFactor != "" {
		fmt.Fprintf(&b, " second_factor=%s", t.SecondFactor)
	}
	b.WriteString("\n")
	_, _ = io.WriteString(stdout, b.String())
}
