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
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// redirectURIRule is the rule oidc2fa.ValidateRedirectURI applies, for error messages.
const redirectURIRule = "redirect URIs must be absolute https URLs without fragment or user info; " +
	"http is allowed only for 127.0.0.1, [::1] and localhost"

// uriList is a repeatable --redirect-uri: each use adds one URI. URIs may hold commas, so one
// use is one URI.
type uriList []string

func (l *uriList) String() string { return strings.Join(*l, " ") }

func (l *uriList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// clientCreate is "idp client create --tenant T --name N [--description D] --redirect-uri U…".
func clientCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp client create", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant the client signs users in to (required)")
	name := fs.String("name", "", "the client's name, shown on the login pages (required)")
	description := fs.String("description", "", "a description for people")
	var uris uriList
	fs.Var(&uris, "redirect-uri", "a redirect URI of the client; repeat for more (at least one)")
	requirePAR := fs.Bool("require-par", false, "the client must start every sign-in with a pushed authorization request")
	alg := fs.String("id-token-alg", "", "the JWS algorithm of the client's ID tokens: "+strings.Join(oidc2fa.SigningAlgorithms(), ", ")+" (default EdDSA)")
	accessToken := fs.Bool("access-token", false, "give the client an access token, good only at the UserInfo endpoint, beside the ID token")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if err := checkIDTokenAlg(*alg); err != nil {
		return err
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("client create: unexpected argument %q; "+
			"the tenant goes in --tenant, the name in --name", pos[0])}
	}
	if err := checkTenantFlag("client create", *tenant); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" {
		return &cli.UsageError{Msg: `client create needs --name, such as: ` +
			`idp client create --tenant acme --name "Acme app" --redirect-uri https://app.example.com/callback`}
	}
	if err := checkRedirectURIs("client create", uris); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return createClient(ctx, d.Backend, oidc2fa.ClientSpec{
		Tenant: *tenant, Name: *name, Description: *description, RedirectURIs: uris, RequirePAR: *requirePAR,
		IDTokenAlg: *alg, AccessToken: *accessToken,
	}, stdout)
}

// createClient registers a client and prints client_id=…, client_secret=… (which is not shown
// again), one redirect_uri=… per redirect URI, require_par=…, id_token_alg=… and
// access_token=….
//
// The tenant's signing key of the client's algorithm is made first, if the tenant has none, so
// that the tenant's JWKS lists it before the client's first sign-in.
func createClient(ctx context.Context, b store.Backend, spec oidc2fa.ClientSpec, stdout io.Writer) error {
	ring, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, b.SigningKeys)
	if err != nil {
		return fmt.Errorf("loading the signing keys: %w", err)
	}
	spec.Signer = ring
	secret, c, err := oidc2fa.RegisterClient(ctx, b.Clients, spec)
	if errors.Is(err, store.ErrNotFound) {
		return noTenant(spec.Tenant)
	}
	if err != nil {
		return fmt.Errorf("registering a client for tenant %q: %w", spec.Tenant, err)
	}
	fmt.Fprintf(stdout, "client_id=%s\nclient_secret=%s\n", c.ID, secret)
	printRedirectURIs(stdout, c.RedirectURIs)
	fmt.Fprintf(stdout, "require_par=%t\nid_token_alg=%s\naccess_token=%t\n", c.RequirePAR, clientAlg(c), c.AccessToken)
	return nil
}

// clientAlg is the JWS algorithm of c's ID tokens, the default spelled out.
func clientAlg(c *store.Client) string {
	return oidc2fa.ClientIDTokenAlg(c)
}

// checkIDTokenAlg checks an --id-token-alg: empty or one of oidc2fa.SigningAlgorithms.
func checkIDTokenAlg(alg string) error {
	if alg != "" && !oidc2fa.ValidSigningAlgorithm(alg) {
		return &cli.UsageError{Msg: fmt.Sprintf("--id-token-alg %q is not one of %s", alg, strings.Join(oidc2fa.SigningAlgorithms(), ", "))}
	}
	return nil
}

// clientList is "idp client list --tenant T".
func clientList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp client list", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant whose clients to list (required)")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("client list: unexpected argument %q; the tenant goes in --tenant", pos[0])}
	}
	if err := checkTenantFlag("client list", *tenant); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return listClients(ctx, d.Backend, *tenant, stdout)
}

// listClients prints one line per client of tenant, in registration order:
// client_id=… name="…" redirect_uris=U1,U2 require_par=true|false id_token_alg=… access_token=true|false.
func listClients(ctx context.Context, b store.Backend, tenant string, stdout io.Writer) error {
	clients, err := oidc2fa.ListClients(ctx, b.Clients, tenant)
	if errors.Is(err, store.ErrNotFound) {
		return noTenant(tenant)
	}
	if err != nil {
		return fmt.Errorf("listing the clients of tenant %q: %w", tenant, err)
	}
	for _, c := range clients {
		fmt.Fprintf(stdout, "client_id=%s name=%q redirect_uris=%s require_par=%t id_token_alg=%s access_token=%t\n", c.ID, c.Name,
			strings.Join(c.RedirectURIs, ","), c.RequirePAR, clientAlg(&c), c.AccessToken)
	}
	return nil
}

// clientRotateSecret is "idp client rotate-secret --tenant T <client id>".
func clientRotateSecret(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp client rotate-secret", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the client's tenant (required)")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if err := checkClientArgs("rotate-secret", *tenant, pos); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return rotateClientSecret(ctx, d.Backend, *tenant, pos[0], stdout)
}

// rotateClientSecret gives the client a new secret and prints client_id=… and client_secret=…;
// the old secret stops working.
func rotateClientSecret(ctx context.Context, b store.Backend, tenant, id string, stdout io.Writer) error {
	secret, c, err := oidc2fa.RotateClientSecret(ctx, b.Clients, tenant, id, time.Now())
	if errors.Is(err, store.ErrNotFound) {
		return clientNotFound(ctx, b, tenant, id)
	}
	if err != nil {
		return fmt.Errorf("rotating the secret of client %q: %w", id, err)
	}
	fmt.Fprintf(stdout, "client_id=%s\nclient_secret=%s\n", c.ID, secret)
	return nil
}

// clientDelete is "idp client delete --tenant T <client id>".
func clientDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp client delete", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the client's tenant (required)")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if err := checkClientArgs("delete", *tenant, pos); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return deleteClient(ctx, d.Backend, *tenant, pos[0], stdout)
}

// deleteClient deletes the client and prints client_id=… and deleted=true.
func deleteClient(ctx context.Context, b store.Backend, tenant, id string, stdout io.Writer) error {
	err := oidc2fa.DeleteClient(ctx, b.Clients, tenant, id)
	if errors.Is(err, store.ErrNotFound) {
		return clientNotFound(ctx, b, tenant, id)
	}
	if err != nil {
		return fmt.Errorf("deleting client %q: %w", id, err)
	}
	fmt.Fprintf(stdout, "client_id=%s\ndeleted=true\n", id)
	return nil
}

// clientSetRedirectURIs is "idp client set-redirect-uris --tenant T <client id> --redirect-uri U…".
func clientSetRedirectURIs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp client set-redirect-uris", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the client's tenant (required)")
	var uris uriList
	fs.Var(&uris, "redirect-uri", "a redirect URI of the client; repeat for more (at least one); they replace the old ones")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if err := checkClientArgs("set-redirect-uris", *tenant, pos); err != nil {
		return err
	}
	if err := checkRedirectURIs("client set-redirect-uris", uris); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return setRedirectURIs(ctx, d.Backend, *tenant, pos[0], uris, stdout)
}

// setRedirectURIs replaces the client's redirect URIs and prints client_id=… and one
// redirect_uri=… per redirect URI.
func setRedirectURIs(ctx context.Context, b store.Backend, tenant, id string, uris []string, stdout io.Writer) error {
	c, err := oidc2fa.SetRedirectURIs(ctx, b.Clients, tenant, id, uris)
	if errors.Is(err, store.ErrNotFound) {
		return clientNotFound(ctx, b, tenant, id)
	}
	if err != nil {
		return fmt.Errorf("setting the redirect URIs of client %q: %w", id, err)
	}
	fmt.Fprintf(stdout, "client_id=%s\n", c.ID)
	printRedirectURIs(stdout, c.RedirectURIs)
	return nil
}

// clientSetRequirePAR is "idp client set-require-par --tenant T <client id> [--require-par=false]".
func clientSetRequirePAR(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp client set-require-par", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the client's tenant (required)")
	requirePAR := fs.Bool("require-par", true, "whether the client must start every sign-in with a pushed authorization request")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if err := checkClientArgs("set-require-par", *tenant, pos); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	return setRequirePAR(ctx, d.Backend, *tenant, pos[0], *requirePAR, stdout)
}

// setRequirePAR sets whether the client must push its authorization requests and prints
// client_id=… and require_par=….
func setRequirePAR(ctx context.Context, b store.Backend, tenant, id string, require bool, stdout io.Writer) error {
	c, err := oidc2fa.SetRequirePAR(ctx, b.Clients, tenant, id, require)
	if errors.Is(err, store.ErrNotFound) {
		return clientNotFound(ctx, b, tenant, id)
	}
	if err != nil {
		return fmt.Errorf("setting require_par of client %q: %w", id, err)
	}
	fmt.Fprintf(stdout, "client_id=%s\nrequire_par=%t\n", c.ID, c.RequirePAR)
	return nil
}

// clientSetIDTokenAlg is "idp client set-id-token-alg --tenant T <client id> ALG".
func clientSetIDTokenAlg(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp client set-id-token-alg", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the client's tenant (required)")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) != 2 {
		return &cli.UsageError{Msg: "client set-id-token-alg takes a client id and an algorithm, such as: " +
			"idp client set-id-token-alg --tenant acme client_01k… RS256 (one of " + strings.Join(oidc2fa.SigningAlgorithms(), ", ") + ")"}
	}
	if err := checkClientArgs("set-id-token-alg", *tenant, pos[:1]); err != nil {
		return err
	}
	if err := checkIDTokenAlg(pos[1]); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	ring, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, d.Backend.SigningKeys)
	if err != nil {
		return fmt.Errorf("loading the signing keys: %w", err)
	}
	c, err := oidc2fa.SetClientIDTokenAlg(ctx, d.Backend.Clients, ring, *tenant, pos[0], pos[1])
	if errors.Is(err, store.ErrNotFound) {
		return clientNotFound(ctx, d.Backend, *tenant, pos[0])
	}
	if err != nil {
		return fmt.Errorf("setting the ID token algorithm of client %q: %w", pos[0], err)
	}
	fmt.Fprintf(stdout, "client_id=%s\nid_token_alg=%s\n", c.ID, clientAlg(c))
	return nil
}

// clientSetAccessToken is "idp client set-access-token --tenant T <client id> [--access-token=false]".
func clientSetAccessToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp client set-access-token", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the client's tenant (required)")
	on := fs.Bool("access-token", true, "whether the client gets an access token for the UserInfo endpoint beside its ID token")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if err := checkClientArgs("set-access-token", *tenant, pos); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	c, err := oidc2fa.SetAccessToken(ctx, d.Backend.Clients, *tenant, pos[0], *on)
	if errors.Is(err, store.ErrNotFound) {
		return clientNotFound(ctx, d.Backend, *tenant, pos[0])
	}
	if err != nil {
		return fmt.Errorf("setting access_token of client %q: %w", pos[0], err)
	}
	fmt.Fprintf(stdout, "client_id=%s\naccess_token=%t\n", c.ID, c.AccessToken)
	return nil
}

// printRedirectURIs prints redirect_uri=… for each of uris.
func printRedirectURIs(stdout io.Writer, uris []string) {
	for _, u := range uris {
		fmt.Fprintf(stdout, "redirect_uri=%s\n", u)
	}
}

// checkTenantFlag checks the --tenant of command.
func checkTenantFlag(command, tenant string) error {
	if tenant == "" {
		return &cli.UsageError{Msg: fmt.Sprintf("%s needs --tenant, such as: idp %s --tenant acme", command, command)}
	}
	if !store.ValidTenantID(tenant) {
		return &cli.UsageError{Msg: fmt.Sprintf("--tenant %q is not a tenant id", tenant)}
	}
	return nil
}

// checkClientArgs checks the --tenant and the one client id of "client <sub>".
func checkClientArgs(sub, tenant string, pos []string) error {
	if len(pos) != 1 {
		return &cli.UsageError{Msg: fmt.Sprintf("client %s takes one client id, such as: idp client %s --tenant acme client_01k…", sub, sub)}
	}
	if err := checkTenantFlag("client "+sub, tenant); err != nil {
		return err
	}
	if !strings.HasPrefix(pos[0], "client_") {
		return &cli.UsageError{Msg: fmt.Sprintf("%q is not a client id: ids start with client_ (client_id= when the client was created)", pos[0])}
	}
	return nil
}

// checkRedirectURIs checks the --redirect-uri flags of command as oidc2fa does, so that a bad
// one is a usage error, named with the rule it breaks.
func checkRedirectURIs(command string, uris []string) error {
	if len(uris) == 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("%s needs at least one --redirect-uri, such as: "+
			"--redirect-uri https://app.example.com/callback", command)}
	}
	for _, u := range uris {
		if err := oidc2fa.ValidateRedirectURI(u); err != nil {
			why := strings.TrimPrefix(strings.TrimSuffix(err.Error(), ": "+store.ErrInvalid.Error()), "oidc2fa: ")
			return &cli.UsageError{Msg: fmt.Sprintf("--redirect-uri: %s (%s)", why, redirectURIRule)}
		}
	}
	return nil
}

// noTenant is the error for a tenant that is not in the store.
func noTenant(tenant string) error {
	return fmt.Errorf("there is no tenant %q in this store (idp tenant create %s makes it)", tenant, tenant)
}

// clientNotFound is the error for a store.ErrNotFound about the client id of tenant: it names
// the tenant when that is what is missing, else the client.
func clientNotFound(ctx context.Context, b store.Backend, tenant, id string) error {
	if _, err := b.Tenants.Get(ctx, tenant); errors.Is(err, store.ErrNotFound) {
		return noTenant(tenant)
	}
	return fmt.Errorf("there is no client %q in tenant %q", id, tenant)
}
