package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/examples/internal/httpserve"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// demoTenant is the tenant the service creates on start.
const demoTenant = "demo"

// serve runs the identity service until ctx is done, then shuts it down gracefully and returns
// nil.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on")
	baseFlag := fs.String("base-url", "", "the URL clients reach the service at (default http:// and the address)")
	db := fs.String("db", defaultDB, dbUsage)
	levelFlag := fs.String("log-level", "info", "debug, info, warn or error")
	rest, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(rest) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("unexpected argument %q", rest[0])}
	}
	level, err := cli.ParseLogLevel(*levelFlag)
	if err != nil {
		return err
	}
	base := ""
	if *baseFlag != "" {
		if base, err = parseBaseURL(*baseFlag); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	d, err := openDB(*db)
	if err != nil {
		return err
	}
	defer func() {
		if err := d.close(); err != nil {
			log.Error("closing the store", "err", err)
		}
	}()
	secret, err := ensureDemo(ctx, d.Backend, log)
	if err != nil {
		return err
	}

	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close() // Serve closes it too; this covers the returns before Serve
	if base == "" {
		base = httpserve.BaseURL(ln.Addr())
	}
	svc, err := newServices(d.Backend, base, log)
	if err != nil {
		return err
	}
	srv := httpserve.Start(ln, httpserve.AccessLog(log, svc.handler()), log)
	log.Info("identity service listening", "addr", ln.Addr().String(), "base_url", base, "db", *db)
	printStart(stdout, base, secret, *db, d.persistent)
	return srv.Wait(ctx)
}

// ensureDemo creates the demo tenant and issues an API key for it, unless the tenant exists. It
// returns the key's secret, or "" when the tenant existed.
func ensureDemo(ctx context.Context, b store.Backend, log *slog.Logger) (string, error) {
	now := time.Now()
	err := b.Tenants.Create(ctx, store.Tenant{ID: demoTenant, DisplayName: "Demo", Created: now})
	if errors.Is(err, store.ErrConflict) {
		log.Info("tenant exists", "tenant", demoTenant)
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("creating tenant %q: %w", demoTenant, err)
	}
	secret, key, err := scimsvc.IssueAPIKey(ctx, b.APIKeys, scimsvc.KeySpec{
		Name:    "demo key of idp",
		Tenants: []string{demoTenant},
		Now:     now,
	})
	if err != nil {
		return "", fmt.Errorf("issuing an API key for tenant %q: %w", demoTenant, err)
	}
	log.Info("tenant created", "tenant", demoTenant, "api_key_id", key.ID)
	return secret, nil
}

// printStart writes what a script and a person need to use the service: key=value lines, a
// blank line, then hints. secret is "" when the demo tenant existed before.
func printStart(w io.Writer, base, secret, db string, persistent bool) {
	scimBase := scimBaseURL(base, demoTenant)
	fmt.Fprintf(w, "tenant=%s\nscim_base_url=%s\n", demoTenant, scimBase)
	if secret == "" {
		fmt.Fprintf(w, "\nThe tenant %q already exists, so no API key was issued. Use a key you kept, or\n"+
			"issue one (its secret is printed once):\n\n  go run ./examples/idp apikey create --tenant %s -db %s\n",
			demoTenant, demoTenant, shellQuote(db))
		return
	}
	fmt.Fprintf(w, "scim_api_key=%s\n\n", secret)
	fmt.Fprintf(w, "The SCIM API of tenant %q is at %s.\n", demoTenant, scimBase)
	fmt.Fprint(w, "Its API key is printed this once; only its hash is stored.\n")
	if !persistent {
		fmt.Fprint(w, "The store is in memory: tenants, keys and users go when the service stops.\n")
	}
	fmt.Fprintf(w, "\nTry it from another shell:\n\n  KEY=%s\n  BASE=%s\n\n%s\nStop the service with Ctrl-C.\n",
		shellQuote(secret), shellQuote(scimBase), tryIt)
}

// tryIt are the curl commands of the README's quick start, which use $KEY and $BASE.
const tryIt = `  # create a user
  curl -sS -w '\n' -X POST "$BASE/Users" \
    -H "Authorization: Bearer $KEY" -H 'Content-Type: application/scim+json' \
    -d '{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ann@example.com","name":{"givenName":"Ann","familyName":"Lee"},"emails":[{"value":"ann@example.com","type":"work","primary":true}]}'

  # find it by userName
  curl -sS -w '\n' -G "$BASE/Users" -H "Authorization: Bearer $KEY" \
    --data-urlencode 'filter=userName eq "ann@example.com"'

  # keep its id
  ID=$(curl -sS -G "$BASE/Users" -H "Authorization: Bearer $KEY" \
    --data-urlencode 'filter=userName eq "ann@example.com"' --data-urlencode 'attributes=id' |
    grep -o 'user_[0-9a-z]*')

  # deactivate it
  curl -sS -w '\n' -X PATCH "$BASE/Users/$ID" \
    -H "Authorization: Bearer $KEY" -H 'Content-Type: application/scim+json' \
    -d '{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}'

  # delete it (204)
  curl -sS -w '%{http_code}\n' -X DELETE "$BASE/Users/$ID" -H "Authorization: Bearer $KEY"
`

// parseBaseURL checks -base-url and returns it without a trailing slash.
func parseBaseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", &cli.UsageError{Msg: fmt.Sprintf(
			"-base-url %q: want an absolute http or https URL without query or fragment, such as https://id.example.com", s)}
	}
	return strings.TrimRight(s, "/"), nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
