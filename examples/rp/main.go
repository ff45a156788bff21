// Command rp is a small relying application that uses visid as its second factor: it checks a
// password itself, then sends the browser to the visid identity service, which confirms the
// same user with its own login and sends the browser back with an ID token. It shows how an
// application wires oidc2fa/rp.
//
// Start the identity service first (go run ./examples/idp), which prints client_id=… and
// client_secret=… for this application, then, in another shell:
//
//	export VISID_CLIENT_SECRET=secret_…
//	go run ./examples/rp -client-id client_…
//
// and open http://127.0.0.1:8081 in a browser. The demo user is alice@example.com, with the
// password "correct horse battery staple". On start the application prints rp_url=… and a
// blank line, for scripts to read, then hints. Logs go to stderr.
//
// The README walks through it: https://github.com/visid/visid/blob/main/README.md#try-the-second-factor-in-a-browser.
package main

import (
	"context"
	"io"
	"os"

	"github.com/visid/visid/examples/internal/cli"
)

func main() {
	os.Exit(exitCode(cli.RunInterruptible(run), os.Stderr))
}

// Defaults of the flags.
const (
	defaultAddr   = "127.0.0.1:8081"
	defaultIssuer = "http://localhost:8080/oidc/demo" // tenant demo of go run ./examples/idp
	// secretEnv holds the client secret when -client-secret is not given, so that it need not
	// be on the command line (where ps and the shell's history show it).
	secretEnv = "VISID_CLIENT_SECRET"
)

const usage = `Usage:
  rp -client-id ID [-client-secret SECRET] [flags]

A relying application with visid as its second factor: a password form, then visid.

Flags:
  -addr HOST:PORT      the address to listen on (default ` + defaultAddr + `; port 0 picks a free port)
  -base-url URL        the URL browsers reach the app at (default http:// and the address)
  -issuer URL          visid's issuer for the tenant (default ` + defaultIssuer + `)
  -client-id ID        the client id visid registered for this app (client_…)
  -client-secret S     its secret (secret_…); default: the environment variable ` + secretEnv + `
  -redirect-uri URL    where visid sends the browser back; it must reach this app's /callback and
                       be registered with visid exactly (default base-url + /callback)
  -users FILE          more users, one "email:password" a line, beside the demo user
  -sessions KIND       where sign-ins wait for visid's answer: "server" (in memory, the default)
                       or "cookie" (in encrypted cookies, with a new key at each start)
  -no-par              send the sign-in request through the browser even when visid offers
                       pushed authorization requests (to see the check of the user in the ID
                       token at work; never needed otherwise)
  -log-level LEVEL     debug, info, warn or error (default info); logs go to stderr

go run ./examples/idp prints the lines client_id=… and client_secret=… to use here.
`

// run is the program: it serves the application until ctx is cancelled and returns nil after
// a graceful shutdown. A mistake on the command line is a *cli.UsageError.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr, os.Getenv(secretEnv))
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	return serve(ctx, cfg, stdout, stderr)
}

// exitCode is cli.ExitCode for rp: it reports err on stderr, unless already reported, and
// returns the exit status for it.
func exitCode(err error, stderr io.Writer) int {
	return cli.ExitCode(err, stderr, "rp", "rp -h")
}
