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
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/examples/internal/httpserve"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/otelstore"
	"github.com/visid/visid/webhooks"
)

// scimRequestTimeout bounds each SCIM request and its store calls, well within the server's
// write timeout, so a request held up by a slow or busy store is answered 503 with Retry-After
// before the server gives up on its connection.
const scimRequestTimeout = httpserve.WriteTimeout / 2

// serve runs the identity service until ctx is done, then shuts it down gracefully and returns
// nil.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on")
	baseFlag := fs.String("base-url", "", "the URL clients reach the service at (default http:// and the address, with localhost for 127.0.0.1 and [::1])")
	db := fs.String("db", defaultDB, dbUsage)
	levelFlag := fs.String("log-level", "info", "debug, info, warn or error")
	accessFlush := fs.Duration("access-log-delay", defaultAccessLogDelay, "how long access log lines may wait to be written together (0: each at once)")
	redisFlag := fs.String("redis", "", "redis://… shares the SCIM and sign-in rate limits with every instance through Redis")
	requirePAR := fs.Bool("require-par", false, "every client must start sign-ins with a pushed authorization request")
	retention := fs.Duration("event-retention", defaultEventRetention, "how long events are kept")
	hookPrivate := fs.Bool("webhook-allow-private-targets", false, "deliver events to loopback, private and link-local addresses too (development only)")
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
	var demoMode demoFlag
	fs.Var(&demoMode, "demo", demoUsage)
	var scimExt scimExtensionFlag
	fs.Var(&scimExt, "scim-extension", scimExtensionUsage)
	groupNoContent := fs.Bool("scim-group-no-content", false, "answer SCIM PUT and PATCH of a group with 204 No Content instead of the group")
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
	withExtensions, err := loadSCIMExtensions(scimExt)
	if err != nil {
		return err
	}
	base := ""
	if *baseFlag != "" {
		if base, err = parseBaseURL(*baseFlag); err != nil {
			return err
		}
	}
	if *accessFlush < 0 || *accessFlush > maxAccessLogDelay {
		return &cli.UsageError{Msg: fmt.Sprintf("-access-log-delay %v: give 0 (each line at once) up to %v", *accessFlush, maxAccessLogDelay)}
	}
	// The access log's lines wait up to -access-log-delay to be written together; the service's
	// own records are written at once, after them.
	logOut := httpserve.NewLogWriter(stderr, *accessFlush)
	defer logOut.Flush()
	logOpts := &slog.HandlerOptions{Level: level}
	log := slog.New(slog.NewTextHandler(logOut.Now(), logOpts))
	accessLog := httpserve.NewAccessLogger(logOut, level)

	// A start that fails removes the store files it made (after closing the store: defers
	// run last first).
	made, started := filesNotYetThere(*db), false
	defer func() {
		if !started {
			made.remove()
		}
	}()
	d, err := openDB(ctx, *db)
	if err != nil {
		return err
	}
	defer func() {
		if err := d.close(); err != nil {
			log.Error("closing the store", "err", err)
		}
	}()
	if demoMode.enabled(*db) {
		if err := checkDemoStore(ctx, d.Tenants, *db, stderr); err != nil {
			return err
		}
	}
	mp, metrics, err := newMeterProvider()
	if err != nil {
		return err
	}
	defer mp.Shutdown(context.WithoutCancel(ctx))
	b, err := otelstore.Wrap(d.Backend, otelstore.Config{MeterProvider: mp, TracerProvider: tracerProvider})
	if err != nil {
		return err
	}
	sec, err := newSecrets(ctx, b, d.kek)
	if err != nil {
		return err
	}

	ln, err := listen(ctx, "addr", *addr, addrFix)
	if err != nil {
		return err
	}
	defer ln.Close() // Serve closes it too; this covers the returns before Serve
	if base == "" {
		base = defaultBaseURL(ln.Addr())
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
	svc, err := newServices(b, base, sec, lim, *requirePAR, *groupNoContent, trusted, log, mp, withExtensions)
	if err != nil {
		return err
	}
	svc.demo = demoMode.enabled(*db)
	var adminLn net.Listener
	if *adminAddr != "" {
		if adminLn, err = listen(ctx, "admin-addr", *adminAddr, adminAddrFix); err != nil {
			return err
		}
		defer adminLn.Close()
	}
	start, err := startMessage(ctx, b, svc, log, demoMode.enabled(*db), base, *db, d.persistent)
	if err != nil {
		return err
	}
	go sweep(ctx, b, time.Minute, *retention, log)
	deliverer, err := webhooks.NewDeliverer(webhooks.Config{Events: b.Events, Webhooks: b.Webhooks, Logger: log,
		AllowPrivateTargets: *hookPrivate})
	if err != nil {
		return err
	}
	go deliverer.Run(ctx, webhookInterval)
	started = true
	servers := []*httpserve.Server{httpserve.Start(ln, httpserve.AccessLog(accessLog, svc.handler(), redactPath), log)}
	if adminLn != nil {
		rd := &readiness{tenants: d.Tenants, probe: d.probe, keys: d.SigningKeys, log: log}
		if d.size != nil {
			rd.size = &storeSize{read: d.size}
			if err := rd.size.observe(mp); err != nil {
				return err
			}
		}
		if lim.ping != nil {
			rd.redis = &redisHealth{ping: lim.ping, log: log}
			if err := rd.redis.observe(mp); err != nil {
				return err
			}
		}
		servers = append(servers, httpserve.Start(adminLn, adminHandler(metrics, rd), log))
		log.Info("admin server listening", "addr", adminLn.Addr().String(), "paths", "/metrics /healthz /readyz")
	}
	log.Info("identity service listening", "addr", ln.Addr().String(), "base_url", base, "db", redactDSN(*db))
	fmt.Fprint(stdout, start)
	return httpserve.WaitAll(ctx, log, servers...)
}

// defaultAccessLogDelay is how long an access log line may wait to be written with others
// (-access-log-delay), and maxAccessLogDelay the most it may be set to.
const (
	defaultAccessLogDelay = 100 * time.Millisecond
	maxAccessLogDelay     = 10 * time.Second
)

// defaultEventRetention is how long the service keeps events (-event-retention).
const defaultEventRetention = 30 * 24 * time.Hour

// webhookInterval is how often the service asks the store for the webhook endpoints that are
// due (and again as each delivery turn ends): a new event reaches its endpoints within about
// this long. Asking costs a look at an index, however many tenants the store holds.
const webhookInterval = time.Second

// sweep removes expired codes, interactions (including enrollment links) and pushed
// authorization requests, and events older than retention, every interval until ctx is done,
// the library leaving that to its host. (The signing keys need no timer: the key ring reads a
// tenant's keys again when its copy is older than oidc2fa.DefaultKeyRefresh.)
func sweep(ctx context.Context, b store.Backend, interval, retention time.Duration, log *slog.Logger) {
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
			accessTokens, err5 := b.AccessTokens.DeleteExpired(ctx, now)
			if err := errors.Join(err1, err2, err3, err4, err5); err != nil && ctx.Err() == nil {
				log.Error("removing expired codes, interactions, pushed requests, access tokens and events", "err", err)
			} else if codes+interactions+pushed+accessTokens+events > 0 {
				log.Debug("removed expired codes, interactions, pushed requests, access tokens and events", "codes", codes,
					"interactions", interactions, "pushed_requests", pushed, "access_tokens", accessTokens, "events", events)
			}
		}
	}
}

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

// defaultBaseURL is the base URL of the service listening at a, when -base-url is not given:
// http:// and the address, with localhost for 127.0.0.1, ::1 and an unspecified IP. A passkey's
// relying party ID is a domain name, never an IP address, so the pages of a base URL on an IP
// offer no passkey.
func defaultBaseURL(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok && (tcp.IP.Equal(net.IPv4(127, 0, 0, 1)) || tcp.IP.Equal(net.IPv6loopback)) {
		return "http://" + net.JoinHostPort("localhost", strconv.Itoa(tcp.Port))
	}
	return httpserve.BaseURL(a)
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
