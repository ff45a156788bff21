package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/examples/internal/httpserve"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/otelstore"
	"github.com/visid/visid/webhooks"
)

// demoTenant is the tenant the service creates on start.
const demoTenant = "demo"

// scimRequestTimeout bounds each SCIM request and its store calls, well within the server's
// write timeout, so a request held up by a slow or busy store is answered 503 with Retry-After
// before the server gives up on its connection.
const scimRequestTimeout = httpserve.WriteTimeout / 2

// serve runs the identity service until ctx is done, then shuts it down gracefully and returns
// nil.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on")
	baseFlag := fs.String("base-url", "", "the URL clients reach the service at (default http:// and the address)")
	db := fs.String("db", defaultDB, dbUsage)
	levelFlag := fs.String("log-level", "info", "debug, info, warn or error")
	redisFlag := fs.String("redis", "", "redis://… shares the SCIM and sign-in rate limits with every instance through Redis")
	requirePAR := fs.Bool("require-par", false, "every client must start sign-ins with a pushed authorization request")
	retention := fs.Duration("event-retention", defaultEventRetention, "how long events are kept")
	adminAddr := fs.String("admin-addr", defaultAdminAddr, `the address of /metrics, /healthz and /readyz ("" for none)`)
	scimRateFlag := fs.String("scim-rate", defaultSCIMRate, "SCIM requests per API key and tenant, such as 200/min or 25/s")
	scimBurst := fs.Int("scim-burst", 0, "SCIM requests a key may make at once (0: the rate's count)")
	var trusted []netip.Prefix
	fs.Func("trusted-proxy", "a CIDR (or address) of the reverse proxies or load balancers in front, whose X-Forwarded-For\n"+
		"names the client; repeat it or give a comma list (default: none, every request's client is its connection's peer)",
		func(s string) error {
			ps, err := parseTrustedProxies(s)
			trusted = append(trusted, ps...)
			return err
		})
	rest, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(rest) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("unexpected argument %q", rest[0])}
	}
	if *retention < time.Hour {
		return &cli.UsageError{Msg: fmt.Sprintf("-event-retention %v is too short; give an hour or more, such as 720h (30 days)", *retention)}
	}
	level, err := cli.ParseLogLevel(*levelFlag)
	if err != nil {
		return err
	}
	scimRate, err := parseSCIMRate(*scimRateFlag, *scimBurst)
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

	d, err := openDB(ctx, *db)
	if err != nil {
		return err
	}
	defer func() {
		if err := d.close(); err != nil {
			log.Error("closing the store", "err", err)
		}
	}()
	mp, metrics, err := newMeterProvider()
	if err != nil {
		return err
	}
	defer mp.Shutdown(context.WithoutCancel(ctx))
	b, err := otelstore.Wrap(d.Backend, otelstore.Config{MeterProvider: mp})
	if err != nil {
		return err
	}
	sec, err := newSecrets(ctx, b, d.kek)
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
	var lim limiters
	if *redisFlag != "" {
		var closeRedis func() error
		if lim, closeRedis, err = redisLimiters(*redisFlag, scimRate, log); err != nil {
			return err
		}
		defer closeRedis()
	} else if lim, err = memoryLimiters(scimRate); err != nil {
		return err
	}
	svc, err := newServices(b, base, sec, lim, *requirePAR, trusted, log, mp)
	if err != nil {
		return err
	}
	var adminLn net.Listener
	if *adminAddr != "" {
		if adminLn, err = (&net.ListenConfig{}).Listen(ctx, "tcp", *adminAddr); err != nil {
			return fmt.Errorf("the admin server (-admin-addr): %w", err)
		}
		defer adminLn.Close()
	}
	dm, err := ensureDemo(ctx, b, svc, log)
	if err != nil {
		return err
	}
	go sweep(ctx, b, sec.keys, time.Minute, *retention, log)
	deliverer, err := webhooks.NewDeliverer(webhooks.Config{Events: b.Events, Webhooks: b.Webhooks, Tenants: b.Tenants, Logger: log})
	if err != nil {
		return err
	}
	go deliverer.Run(ctx, webhookInterval)
	adminDone := make(chan error, 1)
	if adminLn != nil {
		rd := &readiness{tenants: d.Tenants, redis: lim.ping, keys: sec.keys, log: log}
		admin := httpserve.Start(adminLn, adminHandler(metrics, rd), log)
		log.Info("admin server listening", "addr", adminLn.Addr().String(), "paths", "/metrics /healthz /readyz")
		go func() { adminDone <- admin.Wait(ctx) }()
	} else {
		adminDone <- nil
	}
	srv := httpserve.Start(ln, httpserve.AccessLog(log, svc.handler()), log)
	log.Info("identity service listening", "addr", ln.Addr().String(), "base_url", base, "db", *db)
	printStart(stdout, base, dm, *db, d.persistent)
	err = srv.Wait(ctx)
	return errors.Join(err, <-adminDone)
}

// defaultEventRetention is how long the service keeps events (-event-retention).
const defaultEventRetention = 30 * 24 * time.Hour

// webhookInterval is how often the service looks for events to post to webhook endpoints.
const webhookInterval = time.Second

// sweep removes expired codes, interactions (including enrollment links) and pushed
// authorization requests, and events older than retention, every interval until ctx is done,
// the library leaving that to its host; and it reloads the signing keys (ring may be nil), so a
// rotation by another instance reaches this one.
func sweep(ctx context.Context, b store.Backend, ring *oidc2fa.KeyRing, interval, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			codes, err1 := b.Codes.DeleteExpired(ctx, now)
			interactions, err2 := b.Interactions.DeleteExpired(ctx, now)
			pushed, err3 := b.Pushed.DeleteExpired(ctx, now)
			events, err4 := b.Events.DeleteExpired(ctx, now.Add(-retention))
			if err := errors.Join(err1, err2, err3, err4); err != nil && ctx.Err() == nil {
				log.Error("removing expired codes, interactions, pushed requests and events", "err", err)
			} else if codes+interactions+pushed+events > 0 {
				log.Debug("removed expired codes, interactions, pushed requests and events", "codes", codes,
					"interactions", interactions, "pushed_requests", pushed, "events", events)
			}
			if ring != nil {
				if err := ring.Reload(ctx); err != nil && ctx.Err() == nil {
					log.Error("reloading the signing keys", "err", err)
				}
			}
		}
	}
}

// The demo the service sets up on its first start: tenant demo, an API key, a client for
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
			"Use the ones you kept, or issue new ones (secrets are printed once):\n\n"+
			"  go run ./examples/idp apikey create --tenant %s -db %s\n"+
			"  go run ./examples/idp client list --tenant %s -db %s\n"+
			"  go run ./examples/idp client rotate-secret --tenant %s <client id> -db %s\n",
			iss, demoTenant, demoTenant, shellQuote(db), demoTenant, shellQuote(db), demoTenant, shellQuote(db))
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

// parseTrustedProxies parses a value of -trusted-proxy: CIDRs or addresses (a /32 or /128),
// separated by commas.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		p, err := netip.ParsePrefix(part)
		if err != nil {
			a, aerr := netip.ParseAddr(part)
			if aerr != nil {
				return nil, fmt.Errorf("%q is neither a CIDR such as 10.0.0.0/8 nor an address", part)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

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
