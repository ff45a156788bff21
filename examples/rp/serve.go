package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/visid/visid/examples/internal/httpserve"
	"github.com/visid/visid/oidc2fa/rp"
)

// connectTimeout is how long the start waits for visid's discovery document.
const connectTimeout = 10 * time.Second

// serve runs the application until ctx is done, then shuts it down gracefully and returns nil.
func serve(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.level}))

	list := newUsers()
	extra := 0
	if cfg.usersFile != "" {
		var err error
		if extra, err = list.load(cfg.usersFile); err != nil {
			return fmt.Errorf("-users: %w", err)
		}
	}

	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("-addr %s: the address is in use, by another program or another rp: "+
			"stop it, or give another address with -addr HOST:PORT (port 0 picks a free one)", cfg.addr)
	case err != nil:
		return fmt.Errorf("-addr %s: %w", cfg.addr, err)
	}
	defer ln.Close() // Serve closes it too; this covers the returns before Serve
	base := cfg.baseURL
	if base == "" {
		base = httpserve.BaseURL(ln.Addr())
	}
	redirectURI := cfg.redirectURI
	if redirectURI == "" {
		redirectURI = base + "/callback"
	}
	secure := strings.HasPrefix(base, "https://")

	second, err := connect(ctx, cfg, redirectURI, secure, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return err
	}
	issuer, _ := url.Parse(cfg.issuer) // checked by parseConfig
	a := &app{
		users:    list,
		sessions: newSessions(secure, time.Now),
		second:   second,
		pages:    newPages(issuer.Scheme+"://"+issuer.Host, log),
		log:      log,
	}
	srv := httpserve.Start(ln, httpserve.AccessLog(log, a.handler(), nil), log)
	log.Info("app listening", "addr", ln.Addr().String(), "base_url", base, "issuer", cfg.issuer,
		"redirect_uri", redirectURI, "sessions", cfg.sessions, "users", list.len())
	printStart(stdout, base, cfg.issuer, redirectURI, cfg.usersFile, extra)
	return srv.Wait(ctx)
}

// connect makes the relying party of cfg.issuer: rp.New fetches visid's discovery document,
// so an identity service that is not running is found here, at the start, and CheckClient asks
// visid whether it accepts the client id and secret, so wrong credentials are found here too.
func connect(ctx context.Context, cfg config, redirectURI string, secure bool, log *slog.Logger) (*rp.RP, error) {
	var sessions rp.Sessions
	var err error
	switch cfg.sessions {
	case "cookie":
		// A key per start: sign-ins in progress end with the process. Instances behind one
		// load balancer would share a key kept secret.
		key := make([]byte, 32)
		_, _ = rand.Read(key) // never fails: crypto/rand crashes the program rather than return an error
		sessions, err = rp.NewCookieSessions(rp.CookieSessionsConfig{Key: key, Secure: secure})
	default:
		sessions, err = rp.NewServerSessions(rp.ServerSessionsConfig{Secure: secure})
	}
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	second, err := rp.New(cctx, rp.Config{
		Issuer:       cfg.issuer,
		ClientID:     cfg.clientID,
		ClientSecret: cfg.clientSecret,
		RedirectURI:  redirectURI,
		Sessions:     sessions,
		DisablePAR:   cfg.noPAR,
		Logger:       log,
	})
	var unreachable *url.Error // the HTTP client's error: nothing answered
	switch {
	case errors.As(err, &unreachable):
		return nil, fmt.Errorf("visid is not reachable at %s: %v\n"+
			"Start the identity service first, in another shell, and keep it running:\n\n"+
			"  go run ./examples/idp\n\n"+
			"or point -issuer at a running one", cfg.issuer, unreachable.Err)
	case err != nil:
		return nil, fmt.Errorf("visid at %s cannot be used: %w\n"+
			"Check -issuer: it is the identity service's URL, /oidc/ and the tenant, such as %s", cfg.issuer, err, defaultIssuer)
	}
	// The credentials are checked now, not after a user has passed the second factor.
	err = second.CheckClient(cctx)
	switch {
	case errors.Is(err, rp.ErrClient):
		return nil, fmt.Errorf("visid at %s does not accept -client-id %s with this client secret.\n"+
			"Use the client_id=… and client_secret=… lines that go run ./examples/idp printed for this store "+
			"(a new -db, or idp client rotate-secret, changes them), or register this app:\n\n"+
			"  go run ./examples/idp client create --tenant demo --name \"My app\" --redirect-uri %s", cfg.issuer, cfg.clientID, redirectURI)
	case err != nil:
		return nil, fmt.Errorf("visid at %s could not check this app's client id and secret: %w", cfg.issuer, err)
	}
	// So is the callback: an unregistered one would fail every sign-in.
	err = second.CheckRedirectURI(cctx)
	switch {
	case errors.Is(err, rp.ErrRedirectURI):
		return nil, fmt.Errorf("visid at %s does not accept the callback %s for -client-id %s, so every sign-in would fail.\n"+
			"Register it with visid (this replaces the client's redirect URIs: repeat --redirect-uri for each to keep):\n\n"+
			"  go run ./examples/idp client set-redirect-uris --tenant %s %s --redirect-uri %s\n\n"+
			"or give -redirect-uri (or -addr) so that the callback is one visid knows", cfg.issuer, redirectURI, cfg.clientID,
			tenantOf(cfg.issuer), cfg.clientID, redirectURI)
	case errors.Is(err, rp.ErrCannotCheck):
		log.Warn("visid offers no pushed authorization requests: the callback is checked only when a user signs in",
			"redirect_uri", redirectURI)
	case err != nil:
		return nil, fmt.Errorf("visid at %s could not check this app's callback %s: %w", cfg.issuer, redirectURI, err)
	}
	return second, nil
}

// printStart writes what a script and a person need: rp_url=…, a blank line, then hints.
func printStart(w io.Writer, base, issuer, redirectURI, usersFile string, extra int) {
	fmt.Fprintf(w, "rp_url=%s\n\n", base)
	fmt.Fprintf(w, "Open %s in a browser and sign in as %s\nwith the password: %s\n", base, demoEmail, demoPassword)
	if usersFile != "" {
		fmt.Fprintf(w, "(or as one of the %d users of %s)\n", extra, usersFile)
	}
	fmt.Fprintf(w, "\nThe app checks the password itself, then sends the browser to visid\n"+
		"(%s) for the second factor, which sends it back to\n%s.\n"+
		"visid must know the same user, active, in its tenant.\n\nStop the app with Ctrl-C.\n", issuer, redirectURI)
}

// tenantOf is the tenant of a visid issuer, its last path segment ({base}/oidc/T).
func tenantOf(issuer string) string {
	u, err := url.Parse(issuer)
	if err != nil {
		return "T"
	}
	return path.Base(strings.TrimRight(u.Path, "/"))
}
