package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"github.com/visid/visid/examples/internal/cli"
)

// config is the command line, checked.
type config struct {
	addr         string
	baseURL      string // "" until the listener's address is known: http:// and that address
	issuer       string
	clientID     string
	clientSecret string
	redirectURI  string // "": baseURL + "/callback"
	usersFile    string
	sessions     string // "server" or "cookie"
	noPAR        bool   // rp.Config.DisablePAR
	level        slog.Level
}

// parseConfig reads the flags; envSecret is the value of VISID_CLIENT_SECRET, used when
// -client-secret is not given. -h returns flag.ErrHelp; every mistake is a *cli.UsageError.
func parseConfig(args []string, stderr io.Writer, envSecret string) (config, error) {
	var c config
	fs := flag.NewFlagSet("rp", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", defaultAddr, "")
	fs.StringVar(&c.baseURL, "base-url", "", "")
	fs.StringVar(&c.issuer, "issuer", defaultIssuer, "")
	fs.StringVar(&c.clientID, "client-id", "", "")
	fs.StringVar(&c.clientSecret, "client-secret", "", "")
	fs.StringVar(&c.redirectURI, "redirect-uri", "", "")
	fs.StringVar(&c.usersFile, "users", "", "")
	fs.StringVar(&c.sessions, "sessions", "server", "")
	fs.BoolVar(&c.noPAR, "no-par", false, "")
	level := fs.String("log-level", "info", "")
	if err := cli.ParseFlags(fs, args, usage, stderr); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, &cli.UsageError{Msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if c.clientSecret == "" {
		c.clientSecret = envSecret
	}
	var missing []string
	if c.clientID == "" {
		missing = append(missing, "-client-id")
	}
	if c.clientSecret == "" {
		missing = append(missing, "-client-secret (or "+secretEnv+")")
	}
	if len(missing) > 0 {
		return c, &cli.UsageError{Msg: fmt.Sprintf("missing %s.\n"+
			"visid must know this app as a client. Start the identity service, go run ./examples/idp:\n"+
			"it prints the lines client_id=… and client_secret=…. Then run, for example:\n\n"+
			"  export %s=secret_…\n  go run ./examples/rp -client-id client_…\n",
			strings.Join(missing, " and "), secretEnv)}
	}

	var err error
	if c.level, err = cli.ParseLogLevel(*level); err != nil {
		return c, err
	}
	if c.baseURL != "" {
		u, err := url.Parse(c.baseURL)
		if err != nil || !httpURL(u) || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.ForceQuery {
			return c, &cli.UsageError{Msg: fmt.Sprintf(
				"-base-url %q: want an http or https URL without path, query or fragment, such as https://app.example.com", c.baseURL)}
		}
		c.baseURL = u.Scheme + "://" + u.Host
	}
	if u, err := url.Parse(c.issuer); err != nil || !httpURL(u) || u.RawQuery != "" || u.ForceQuery {
		return c, &cli.UsageError{Msg: fmt.Sprintf("-issuer %q: want an http or https URL such as %s", c.issuer, defaultIssuer)}
	}
	if c.redirectURI != "" {
		if u, err := url.Parse(c.redirectURI); err != nil || !httpURL(u) {
			return c, &cli.UsageError{Msg: fmt.Sprintf("-redirect-uri %q: want an absolute http or https URL", c.redirectURI)}
		}
	}
	if c.sessions != "server" && c.sessions != "cookie" {
		return c, &cli.UsageError{Msg: fmt.Sprintf(`-sessions %q: use "server" or "cookie"`, c.sessions)}
	}
	return c, nil
}

// httpURL reports whether u is an absolute http or https URL with a host, without user info or
// fragment.
func httpURL(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil && u.Fragment == ""
}
