package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// The demo and the production store. In demo mode (-demo) the service makes, unless it
// exists, the tenant demo with a SCIM API key, the OpenID client of examples/rp and the user
// alice with a picture password, and prints their secrets. Demo mode is on by default for the
// README's quick start (SQLite and memory) and off for PostgreSQL, the production store; there
// the service makes nothing, and on a store without tenants it prints the commands that make
// the first tenant, its API key and its client.

// demoFlag is -demo: a boolean flag that knows whether it was given, as its default depends on
// -db.
type demoFlag struct {
	set, on bool
}

func (f *demoFlag) String() string   { return strconv.FormatBool(f.on) }
func (f *demoFlag) IsBoolFlag() bool { return true }

func (f *demoFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	f.set, f.on = true, on
	return nil
}

// demoUsage is the help text of -demo.
const demoUsage = "make the demo tenant, user alice, a SCIM API key and the client of examples/rp, " +
	"and print their secrets (default: on for SQLite and memory, off for PostgreSQL)"

// enabled reports whether the service runs in demo mode on the store db names: as -demo says,
// or, without -demo, unless db is PostgreSQL.
func (f *demoFlag) enabled(db string) bool {
	if f.set {
		return f.on
	}
	return !isPostgres(db)
}

// isPostgres reports whether db names a PostgreSQL store.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// demoTenant is the tenant the service makes in demo mode.
const demoTenant = "demo"

// The demo the service sets up in demo mode: tenant demo, an API key, a client for
// examples/rp, and the user alice with a picture password whose points are printed.
const (
	demoUser     = "alice"
	demoEmail    = "alice@example.com"
	demoRedirect = "http://127.0.0.1:8081/callback"
	demoImage    = "harbour"
	// demoPointsHint says in words where demoPoints are, each an object drawn once in the
	// picture (TestDemoHints checks each against the drawing).
	demoPointsHint = "the middle of the sun; the yellow lamp room at the top of the lighthouse; " +
		"the white band on the tall red buoy (the one with a yellow ball on top); " +
		"the jumping orange fish (right); the crossbar of the anchor (bottom left)"
)

// demoPoints are alice's points on demoImage, in canonical units (1000 × 750).
var demoPoints = []picture.Point{{X: 700, Y: 78}, {X: 100, Y: 158}, {X: 420, Y: 495}, {X: 900, Y: 515}, {X: 265, Y: 700}}

// demo is what ensureDemo made; its secrets are "" when the tenant existed before.
type demo struct {
	apiKey       string
	clientID     string
	clientSecret string
}

// ensureDemo sets up the demo unless the tenant exists: the tenant, an API key, the client of
// examples/rp and alice, enrolled with demoPoints on demoImage.
func ensureDemo(ctx context.Context, b store.Backend, svc *services, log *slog.Logger) (*demo, error) {
	now := time.Now()
	err := b.Tenants.Create(ctx, store.Tenant{ID: demoTenant, DisplayName: "Demo", Created: now})
	if errors.Is(err, store.ErrConflict) {
		log.Info("tenant exists", "tenant", demoTenant)
		return &demo{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("creating tenant %q: %w", demoTenant, err)
	}
	dm := &demo{}
	var key *store.APIKey
	dm.apiKey, key, err = scimsvc.IssueAPIKey(ctx, b.APIKeys, scimsvc.KeySpec{
		Name:    "demo key of idp",
		Tenants: []string{demoTenant},
		Now:     now,
	})
	if err != nil {
		return nil, fmt.Errorf("issuing an API key for tenant %q: %w", demoTenant, err)
	}
	var client *store.Client
	dm.clientSecret, client, err = oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant:       demoTenant,
		Name:         "Example app",
		Description:  "examples/rp, the relying application of the README",
		RedirectURIs: []string{demoRedirect},
		Now:          now,
	})
	if err != nil {
		return nil, fmt.Errorf("registering the demo client: %w", err)
	}
	dm.clientID = client.ID
	alice, err := b.Users.Create(ctx, demoTenant, store.User{
		UserName:    demoUser,
		DisplayName: "Alice Demo",
		Name:        store.Name{GivenName: "Alice", FamilyName: "Demo", Formatted: "Alice Demo"},
		Emails:      []store.MultiValue{{Value: demoEmail, Type: "work", Primary: true}},
		Active:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the demo user: %w", err)
	}
	if err := svc.picture.Enroll(ctx, demoTenant, alice.ID, demoImage, demoPoints); err != nil {
		return nil, fmt.Errorf("enrolling the demo user: %w", err)
	}
	log.Info("demo created", "tenant", demoTenant, "api_key_id", key.ID, "client_id", client.ID, "user", alice.ID)
	return dm, nil
}

// printStart writes what a script and a person need to use the service: key=value lines, a
// blank line, then hints. The demo's secrets are "" when the demo tenant existed before.
func printStart(w io.Writer, base string, dm *demo, db string, persistent bool) {
	scimBase := scimBaseURL(base, demoTenant)
	iss := issuer(base, demoTenant)
	fmt.Fprintf(w, "tenant=%s\nscim_base_url=%s\n", demoTenant, scimBase)
	if dm.apiKey == "" {
		fmt.Fprintf(w, "issuer=%s\n\nThe tenant %q already exists, so no API key or client secret was issued.\n"+
			"Use the ones you kept, or issue new ones (secrets are printed once):\n\n  %s\n  %s\n  %s\n",
			iss, demoTenant, adminCommand(db, "apikey create --tenant "+demoTenant), adminCommand(db, "client list --tenant "+demoTenant),
			adminCommand(db, "client rotate-secret --tenant "+demoTenant+" <client id>"))
		return
	}
	fmt.Fprintf(w, "scim_api_key=%s\n", dm.apiKey)
	fmt.Fprintf(w, "issuer=%s\nclient_id=%s\nclient_secret=%s\nredirect_uri=%s\n", iss, dm.clientID, dm.clientSecret, demoRedirect)
	fmt.Fprintf(w, "demo_user=%s\ndemo_image=%s\ndemo_points=%s\n\n", demoUser, demoImage, picture.FormatPoints(demoPoints))
	fmt.Fprintf(w, "The SCIM API of tenant %q is at %s.\n", demoTenant, scimBase)
	fmt.Fprint(w, "Its API key and the client secret are printed this once; only their hashes are stored.\n")
	if !persistent {
		fmt.Fprint(w, "The store is in memory: tenants, keys and users go when the service stops.\n")
	}
	fmt.Fprintf(w, "\nTry the SCIM API from another shell:\n\n  KEY=%s\n  BASE=%s\n\n%s\n",
		shellQuote(dm.apiKey), shellQuote(scimBase), tryIt)
	fmt.Fprintf(w, "Try the second factor: run the example application in another shell,\n\n"+
		"  export VISID_CLIENT_SECRET=%s\n  go run ./examples/rp -client-id %s -issuer %s\n\n"+
		"open http://127.0.0.1:8081, sign in as %s with the password \"correct horse battery staple\",\n"+
		"and on visid's picture (the %s) click, in order:\n%s.\n\nStop the service with Ctrl-C.\n",
		shellQuote(dm.clientSecret), dm.clientID, shellQuote(iss), demoEmail, demoImage, demoPointsHint)
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

// startMessage makes the demo in demo mode and returns what the service prints once it
// listens: printStart's text in demo mode, else printProduction's.
func startMessage(ctx context.Context, b store.Backend, svc *services, log *slog.Logger, demoMode bool,
	base, db string, persistent bool) (string, error) {
	var out strings.Builder
	if demoMode {
		dm, err := ensureDemo(ctx, b, svc, log)
		if err != nil {
			return "", err
		}
		printStart(&out, base, dm, db, persistent)
		return out.String(), nil
	}
	n, err := b.Tenants.Count(ctx) // not a List: a store may hold 100,000 tenants
	if err != nil {
		return "", fmt.Errorf("counting the tenants: %w", err)
	}
	printProduction(&out, base, db, n)
	return out.String(), nil
}

// printProduction is printStart outside demo mode, on a store with n tenants: base_url=… and
// tenants=N before a blank line, then, on a store without tenants, the commands that make the
// first tenant, its SCIM API key and its OpenID client.
func printProduction(w io.Writer, base, db string, n int) {
	fmt.Fprintf(w, "base_url=%s\ntenants=%d\n\n", base, n)
	if n > 0 {
		fmt.Fprintf(w, "Tenant T's SCIM base URL is %s and its OpenID issuer %s; "+
			"list the tenants with:\n\n  %s\n\nStop the service with Ctrl-C.\n",
			scimBaseURL(base, "T"), issuer(base, "T"), adminCommand(db, "tenant list"))
		return
	}
	if db == "memory" || sqlstore.InMemory(db) {
		fmt.Fprintf(w, "The store is in memory and has no tenant: admin commands cannot reach it. "+
			"Use -db sqlite:PATH or postgres://…,\nor -demo for the demo tenant.\n\nStop the service with Ctrl-C.\n")
		return
	}
	fmt.Fprintf(w, "The store has no tenant yet (demo mode, -demo, is off). From another shell, make the first tenant,\n"+
		"its SCIM API key and its OpenID client (secrets are printed once):\n\n  %s\n  %s\n  %s\n\n",
		adminCommand(db, `tenant create acme --name "Acme Corp"`),
		adminCommand(db, `apikey create --tenant acme --name "Entra ID"`),
		adminCommand(db, "client create --tenant acme --name \"Acme app\" --redirect-uri https://app.example.com/callback"))
	if isPostgres(db) {
		fmt.Fprintf(w, "They need the service's $%s.", kekEnv)
		if u, err := url.Parse(db); err == nil && u.User != nil {
			if _, ok := u.User.Password(); ok {
				fmt.Fprint(w, " Put the database password in place of xxxxx.")
			}
		}
		fmt.Fprint(w, "\n")
	}
	fmt.Fprintf(w, "Then give the SCIM base URL %s and the API key to the identity provider\n"+
		"(Entra ID, Okta), and the issuer %s with client_id and client_secret to the application.\n\n"+
		"Stop the service with Ctrl-C.\n", scimBaseURL(base, "acme"), issuer(base, "acme"))
}

// adminCommand is the command line that runs the admin command args on the store db: through
// the program as it was started (go run ./examples/idp when go run built it), with -db unless
// it is the default, and the password of a PostgreSQL URL hidden.
func adminCommand(db, args string) string {
	cmd := "go run ./examples/idp"
	if exe := os.Args[0]; !strings.Contains(filepath.ToSlash(exe), "/go-build") {
		cmd = shellQuote(exe)
	}
	cmd += " " + args
	if db != defaultDB {
		cmd += " -db " + shellQuote(redactDSN(db))
	}
	return cmd
}

// checkDemoStore refuses demo mode on a store that holds a tenant other than demo: demo mode
// writes only into an empty store or one that holds the demo tenant alone, never the published
// demo secrets beside an operator's tenants. It reads at most two tenants and writes nothing;
// the refusal is one line on stderr and a *cli.UsageError (exit status 2).
func checkDemoStore(ctx context.Context, tenants store.Tenants, db string, stderr io.Writer) error {
	page, err := tenants.List(ctx, "", 2)
	if err != nil {
		return fmt.Errorf("reading the tenants: %w", err)
	}
	var other string
	for _, t := range page {
		if t.ID != demoTenant {
			other = t.ID
			break
		}
	}
	if other == "" {
		return nil
	}
	msg := fmt.Sprintf("the store %s holds tenant %q, not only the demo: demo mode would add tenant %q with published secrets to it; "+
		"start with -demo=false", redactDSN(db), other, demoTenant)
	fmt.Fprintf(stderr, "idp: %s\n", msg)
	return &cli.UsageError{Msg: msg, Printed: true}
}
