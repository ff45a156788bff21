package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// subcommands are the subcommands of a group command, in the order the usage lists them; nil
// for a command that takes none.
func subcommands(cmd string) []string {
	switch cmd {
	case "tenant":
		return []string{"create", "list", "set"}
	case "apikey":
		return []string{"create", "list", "revoke"}
	case "client":
		return []string{"create", "list", "rotate-secret", "delete", "set-redirect-uris", "set-require-par",
			"set-id-token-alg", "set-access-token"}
	case "key":
		return []string{"rotate"}
	case "user":
		return []string{"show", "unlock", "remove-passkey"}
	case "webhook":
		return []string{"add", "list", "delete", "resume"}
	}
	return nil
}

// checkGroup returns a usage error when args name a group command without one of its
// subcommands, saying which subcommands exist; nil otherwise ("idp tenant -h" asks for help).
func checkGroup(args []string) error {
	subs := subcommands(args[0])
	switch {
	case subs == nil:
		return nil
	case len(args) < 2 || strings.HasPrefix(args[1], "-") && !cli.IsHelp(args[1]): // only flags
		return &cli.UsageError{Msg: fmt.Sprintf("%s needs a subcommand: %s", args[0], strings.Join(subs, ", "))}
	case cli.IsHelp(args[1]) || slices.Contains(subs, args[1]):
		return nil
	}
	return &cli.UsageError{Msg: fmt.Sprintf("%s has no subcommand %q; its subcommands are %s", args[0], args[1], strings.Join(subs, ", "))}
}

// requireTenant returns the error of noTenant when tenant is not in the store: every command
// that takes --tenant refuses an unknown tenant with it.
func requireTenant(ctx context.Context, tenants store.Tenants, tenant string) error {
	_, err := tenants.Get(ctx, tenant)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return noTenant(tenant)
	case err != nil:
		return fmt.Errorf("reading tenant %q: %w", tenant, err)
	}
	return nil
}

// formatTime is t in RFC 3339, UTC, or "never" for the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// defaultTenantPage is how many tenants "idp tenant list" prints without --limit.
const defaultTenantPage = 100

// tenantList is "idp tenant list [--after ID] [--limit N]".
func tenantList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp tenant list", flag.ContinueOnError)
	db := fs.String("db", defaultDB, dbUsage)
	after := fs.String("after", "", "list the tenants whose id orders after this one (the next: line of the page before)")
	limit := fs.Int("limit", defaultTenantPage, fmt.Sprintf("the most tenants to list, 1 to %d", store.MaxTenantPage))
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("tenant list: unexpected argument %q", pos[0])}
	}
	if *limit < 1 || *limit > store.MaxTenantPage {
		return &cli.UsageError{Msg: fmt.Sprintf("--limit %d: want 1 to %d tenants a page", *limit, store.MaxTenantPage)}
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return listTenants(ctx, d.Tenants, *after, *limit, stdout, func(next string) string {
		args := "tenant list --after " + shellQuote(next)
		if *limit != defaultTenantPage {
			args += " --limit " + strconv.Itoa(*limit)
		}
		return adminCommand(*db, args)
	})
}

// listTenants prints one line per tenant of the page of at most limit tenants after after,
// ordered by id: tenant=… name="…" created=… and its look (printTenant). When more tenants
// follow the page, it ends with "next: " and the command that lists them, which nextCommand
// makes from the page's last id.
func listTenants(ctx context.Context, tenants store.Tenants, after string, limit int, stdout io.Writer, nextCommand func(after string) string) error {
	list, err := tenants.List(ctx, after, limit)
	if err != nil {
		return fmt.Errorf("listing the tenants: %w", err)
	}
	for _, t := range list {
		printTenant(stdout, &t)
	}
	if len(list) < limit {
		return nil
	}
	last := list[len(list)-1].ID
	more, err := tenants.List(ctx, last, 1)
	if err != nil {
		return fmt.Errorf("listing the tenants: %w", err)
	}
	if len(more) > 0 {
		fmt.Fprintf(stdout, "next: %s\n", nextCommand(last))
	}
	return nil
}

// apikeyList is "idp apikey list --tenant T".
func apikeyList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp apikey list", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant whose keys to list (required)")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("apikey list: unexpected argument %q; the tenant goes in --tenant", pos[0])}
	}
	if err := checkTenantFlag("apikey list", *tenant); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return listKeys(ctx, d.Backend, *tenant, stdout)
}

// listKeys prints one line per API key that may act on tenant, in creation order:
// api_key_id=… name="…" created=… last_used=…|never revoked=true|false [revoked_at=…]. Secrets
// are not stored, so none is printed.
func listKeys(ctx context.Context, b store.Backend, tenant string, stdout io.Writer) error {
	if err := requireTenant(ctx, b.Tenants, tenant); err != nil {
		return err
	}
	keys, err := b.APIKeys.List(ctx)
	if err != nil {
		return fmt.Errorf("listing the API keys: %w", err)
	}
	for _, k := range keys {
		if !slices.Contains(k.Tenants, tenant) {
			continue
		}
		fmt.Fprintf(stdout, "api_key_id=%s name=%q created=%s last_used=%s revoked=%t", k.ID, k.Name,
			formatTime(k.Created), formatTime(k.LastUsed), k.Revoked)
		if k.Revoked {
			fmt.Fprintf(stdout, " revoked_at=%s", formatTime(k.RevokedAt))
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// userCmd is "idp user show|unlock --tenant T --user U" and "idp user remove-passkey --tenant T
// --user U --passkey ID".
func userCmd(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp user "+sub, flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the user's tenant (required)")
	user := fs.String("user", "", "the user: userName, primary email or id (required)")
	db := fs.String("db", defaultDB, dbUsage)
	var passkey *string
	if sub == "remove-passkey" {
		passkey = fs.String("passkey", "", "the passkey's credential id, as idp user show prints it (required)")
	}
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("user %s: unexpected argument %q; the user goes in --user", sub, pos[0])}
	}
	if err := checkTenantFlag("user "+sub, *tenant); err != nil {
		return err
	}
	if *user == "" {
		return &cli.UsageError{Msg: fmt.Sprintf("user %s needs --user: the user's userName, primary email or id, such as: "+
			"idp user %s --tenant acme --user ann@example.com", sub, sub)}
	}
	var passkeyID []byte
	if passkey != nil {
		if passkeyID, err = parsePasskeyID(*passkey); err != nil {
			return err
		}
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	switch sub {
	case "unlock":
		return unlockUser(ctx, d.Backend, *tenant, *user, stdout)
	case "remove-passkey":
		return removePasskey(ctx, d.Backend, *tenant, *user, passkeyID, stdout)
	}
	return showUser(ctx, d.Backend, *tenant, *user, stdout)
}

// formatPasskeyID is a passkey's credential id as idp prints it and --passkey takes it:
// base64url without padding, as WebAuthn writes credential ids.
func formatPasskeyID(id []byte) string {
	return base64.RawURLEncoding.EncodeToString(id)
}

// parsePasskeyID reads --passkey, a credential id in base64url (padding allowed).
func parsePasskeyID(s string) ([]byte, error) {
	if s == "" {
		return nil, &cli.UsageError{Msg: "user remove-passkey needs --passkey: the passkey's id, as idp user show prints it " +
			"(passkey=…), such as: idp user remove-passkey --tenant acme --user ann@example.com --passkey AbC-_0", Help: "idp help user"}
	}
	id, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || len(id) == 0 {
		return nil, &cli.UsageError{Msg: fmt.Sprintf("--passkey %q: want a passkey id in base64url (A-Z, a-z, 0-9, - and _), as idp user show prints it", s),
			Help: "idp help user"}
	}
	return id, nil
}

// findUser returns the user of tenant that name names by id, userName or primary email, in
// that order of preference, or an error that says which of tenant and user is missing.
func findUser(ctx context.Context, b store.Backend, tenant, name string) (*store.User, error) {
	if err := requireTenant(ctx, b.Tenants, tenant); err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, "user_") {
		u, err := b.Users.Get(ctx, tenant, name)
		if err == nil {
			return u, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("reading user %q: %w", name, err)
		}
	}
	lit := filter.Literal{Kind: filter.KindString, Str: name}.String()
	for _, f := range []string{`userName eq ` + lit, `emails[value eq ` + lit + ` and primary eq true]`} {
		expr, err := filter.Parse(f, schema.User())
		if err != nil {
			break // no filter literal can hold name, so no user has it
		}
		page, err := b.Users.List(ctx, tenant, store.Query{Filter: expr, StartIndex: 1, Count: 2})
		if err != nil {
			return nil, fmt.Errorf("looking up user %q: %w", name, err)
		}
		if page.TotalResults == 1 {
			return &page.Resources[0], nil
		}
	}
	return nil, fmt.Errorf("tenant %q has no user with the userName, primary email or id %q", tenant, name)
}

// pictureAdmin is the picture login for an administrator's command: it reads and resets failure
// counts and hashes nothing, so its pepper is a throwaway.
func pictureAdmin(b store.Backend) (*picture.Authenticator, error) {
	return newPicture(b, picture.Pepper{ID: "unused", Key: randomKEK()}, slog.New(slog.DiscardHandler), nil)
}

// showUser prints what an operator needs to help a user: user_id=…, user_name=…, active=…,
// picture_enrolled=…, and for an enrolled user image=…, enrolled=…, failures=… and networks=…
// (the failed attempts since the last success and how many source networks they came from),
// locked_until=…|no (when the last lock in force ends), and one lock=… line per lock in force:
// lock=all for the user-wide lock, which shuts out every network but the familiar ones, then
// lock=NETWORK for each locked network, each with its failures=… and until=…; then one
// familiar=NETWORK passed=… line per familiar network (where the user passed within 30 days,
// the 8 most recent: the user-wide lock leaves them open), the most recently passed first.
// Then, whether or not the user has a picture password, passkeys=N and one line per passkey, in
// the order they were added: passkey=ID (the credential id in base64url, which user
// remove-passkey takes) name="…" created=… last_used=…|never backup_eligible=true|false
// sign_count=N. The picture password's points are never printed (they are not stored in the
// clear), nor a passkey's public key.
func showUser(ctx context.Context, b store.Backend, tenant, name string, stdout io.Writer) error {
	u, err := findUser(ctx, b, tenant, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "user_id=%s\nuser_name=%s\nactive=%t\n", u.ID, u.UserName, u.Active)
	if err := showPicture(ctx, b, tenant, u.ID, stdout); err != nil {
		return err
	}
	keys, err := b.Passkeys.List(ctx, tenant, u.ID)
	if err != nil {
		return fmt.Errorf("reading the passkeys of %q: %w", u.ID, err)
	}
	fmt.Fprintf(stdout, "passkeys=%d\n", len(keys))
	for _, k := range keys {
		fmt.Fprintf(stdout, "passkey=%s name=%q created=%s last_used=%s backup_eligible=%t sign_count=%d\n",
			formatPasskeyID(k.ID), k.Name, formatTime(k.Created), formatTime(k.LastUsed), k.BackupEligible, k.SignCount)
	}
	return nil
}

// showPicture prints the picture password lines of showUser for user id.
func showPicture(ctx context.Context, b store.Backend, tenant, id string, stdout io.Writer) error {
	c, err := b.Pictures.Get(ctx, tenant, id)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintln(stdout, "picture_enrolled=false")
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the picture password of %q: %w", id, err)
	}
	auth, err := pictureAdmin(b)
	if err != nil {
		return err
	}
	locks, err := auth.Locks(ctx, tenant, id)
	if err != nil {
		return fmt.Errorf("reading the locks of %q: %w", id, err)
	}
	locked := "no"
	var until time.Time
	for _, l := range locks {
		if l.Until.After(until) {
			until = l.Until
			locked = formatTime(until)
		}
	}
	fmt.Fprintf(stdout, "picture_enrolled=true\nimage=%s\nenrolled=%s\nfailures=%d\nnetworks=%d\nlocked_until=%s\n",
		c.Image, formatTime(c.Created), c.Failures, c.Networks, locked)
	for _, l := range locks {
		if l.Network == "" {
			fmt.Fprintf(stdout, "lock=all networks=%d failures=%d until=%s\n", l.Networks, l.Failures, formatTime(l.Until))
		} else {
			fmt.Fprintf(stdout, "lock=%s failures=%d until=%s\n", l.Network, l.Failures, formatTime(l.Until))
		}
	}
	fams, err := auth.FamiliarNetworks(ctx, tenant, id)
	if err != nil {
		return fmt.Errorf("reading the familiar networks of %q: %w", id, err)
	}
	for _, f := range fams {
		fmt.Fprintf(stdout, "familiar=%s passed=%s\n", f.Network, formatTime(f.Passed))
	}
	return nil
}

// unlockUser forgets every failed attempt at a user's picture password, from every network,
// which ends every lock; it is recorded as secondfactor.unlocked under ctx's Change. It prints
// user_id=…, failures_before=… (the failed attempts it forgot), locks_before=… (the locks in
// force it ended) and unlocked=true.
func unlockUser(ctx context.Context, b store.Backend, tenant, name string, stdout io.Writer) error {
	u, err := findUser(ctx, b, tenant, name)
	if err != nil {
		return err
	}
	c, err := b.Pictures.Get(ctx, tenant, u.ID)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("user %q has no picture password to unlock (idp enroll-link makes a link to set one up)", name)
	}
	if err != nil {
		return fmt.Errorf("reading the picture password of %q: %w", u.ID, err)
	}
	nets, err := b.Pictures.ListNetworkFailures(ctx, tenant, u.ID)
	if err != nil {
		return fmt.Errorf("reading the failures of %q: %w", u.ID, err)
	}
	failures := 0
	for _, n := range nets {
		failures += n.Failures
	}
	failures = max(failures, c.Failures)
	auth, err := pictureAdmin(b)
	if err != nil {
		return err
	}
	locks, err := auth.Locks(ctx, tenant, u.ID)
	if err != nil {
		return fmt.Errorf("reading the locks of %q: %w", u.ID, err)
	}
	if err := auth.Unlock(ctx, tenant, u.ID); err != nil {
		return fmt.Errorf("unlocking %q: %w", u.ID, err)
	}
	fmt.Fprintf(stdout, "user_id=%s\nfailures_before=%d\nlocks_before=%d\nunlocked=true\n", u.ID, failures, len(locks))
	return nil
}

// removePasskey deletes the passkey id of a user, recorded as secondfactor.passkey_removed under
// ctx's Change, and prints user_id=…, removed_passkey=ID and passkeys_left=N. A user left with no
// factor needs an enrollment link (idp enroll-link) to sign in again.
func removePasskey(ctx context.Context, b store.Backend, tenant, name string, id []byte, stdout io.Writer) error {
	u, err := findUser(ctx, b, tenant, name)
	if err != nil {
		return err
	}
	err = b.Passkeys.Delete(ctx, tenant, u.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("user %q has no passkey %s (idp user show --tenant %s --user %s lists them)",
			name, formatPasskeyID(id), shellQuote(tenant), shellQuote(name))
	}
	if err != nil {
		return fmt.Errorf("removing passkey %s of %q: %w", formatPasskeyID(id), u.ID, err)
	}
	left, err := b.Passkeys.List(ctx, tenant, u.ID)
	if err != nil {
		return fmt.Errorf("reading the passkeys of %q: %w", u.ID, err)
	}
	fmt.Fprintf(stdout, "user_id=%s\nremoved_passkey=%s\npasskeys_left=%d\n", u.ID, formatPasskeyID(id), len(left))
	return nil
}
