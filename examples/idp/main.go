// Command idp is the visid identity service: the SCIM 2.0 API of scimsvc at /scim/v2/ and the
// second-factor OpenID provider of oidc2fa, with the picture login, at /oidc/, over one store,
// with admin subcommands for tenants, API keys, OpenID clients and enrollment links.
//
//	go run ./examples/idp                 # serve on 127.0.0.1:8080 as http://localhost:8080
//	go run ./examples/idp -addr :9000 -base-url https://id.example.com
//	go run ./examples/idp tenant create acme --name "Acme Corp"
//	go run ./examples/idp apikey create --tenant acme --name "Entra ID"
//	go run ./examples/idp apikey list --tenant acme
//	go run ./examples/idp apikey revoke key_…
//	go run ./examples/idp tenant list
//	go run ./examples/idp user show --tenant acme --user ann@example.com
//	go run ./examples/idp user unlock --tenant acme --user ann@example.com
//	go run ./examples/idp user remove-passkey --tenant acme --user ann@example.com --passkey AbC…
//	go run ./examples/idp client create --tenant acme --name "Acme app" --redirect-uri https://app.example.com/callback
//	go run ./examples/idp enroll-link --tenant acme --user ann@example.com
//	go run ./examples/idp help
//
// In demo mode (-demo: on by default with SQLite and memory, off with PostgreSQL) the service
// creates on start, unless it exists, the tenant "demo" with an API key, the OpenID client of
// examples/rp and the user alice with a picture password, and prints, one per line and before
// a blank line, tenant=…, scim_base_url=…, scim_api_key=…, issuer=…, client_id=…,
// client_secret=…, redirect_uri=…, demo_user=…, demo_image=… and demo_points=…, for scripts to
// read; then what to try. Outside demo mode it creates nothing and prints base_url=… and
// tenants=N, then, on a store without tenants, the admin commands that create the first tenant,
// its API key and its client. Admin commands never create a store, and flags may come before
// or after them. Logs go to stderr.
//
// The quick start is in the README, https://github.com/visid/visid/blob/main/README.md#quick-start, and every flag and admin
// command in https://github.com/visid/visid/blob/main/docs/operators.md.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/store"
)

func main() {
	// go-redis's own lines (a Redis outage makes many) go through slog, in the format of the
	// service's log, rather than to stderr as they are. Its logger is the process's, so it is
	// set here, once, and never by run.
	redis.SetLogger(redisLogger{log: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	os.Exit(exitCode(cli.RunInterruptible(run), os.Stderr))
}

// run is the program: it runs the command that args name (the service, when args are empty or
// start with a flag) until it is done or ctx is cancelled; the service returns nil after a
// graceful shutdown. A mistake on the command line is a *cli.UsageError.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	args = cli.CommandFirst(args, isCommandWord)
	if len(args) > 0 && isVersion(args[0]) {
		printVersion(stdout)
		return nil
	}
	if len(args) == 0 || len(args[0]) > 1 && args[0][0] == '-' && !cli.IsHelp(args[0]) {
		return serve(ctx, args, stdout, stderr)
	}
	// What an admin command changes is recorded in the tenant's event log as the administrator's.
	ctx = store.WithChange(ctx, store.Change{Actor: "admin"})
	if err := checkGroup(args); err != nil {
		return err
	}
	switch cmd, rest := args[0], args[1:]; {
	case cmd == "help" && len(rest) > 0 && usageOf(rest[0]) != "":
		fmt.Fprint(stdout, usageOf(rest[0]))
		return nil
	case cli.IsHelp(cmd) || cmd == "help" || subcommands(cmd) != nil && cli.IsHelp(rest[0]):
		fmt.Fprint(stdout, usage)
		return nil
	case cmd == "tenant" && rest[0] == "create":
		return tenantCreate(ctx, rest[1:], stdout, stderr)
	case cmd == "tenant" && rest[0] == "list":
		return tenantList(ctx, rest[1:], stdout, stderr)
	case cmd == "tenant" && rest[0] == "set":
		return tenantSet(ctx, rest[1:], stdout, stderr)
	case cmd == "apikey" && rest[0] == "create":
		return apikeyCreate(ctx, rest[1:], stdout, stderr)
	case cmd == "apikey" && rest[0] == "list":
		return apikeyList(ctx, rest[1:], stdout, stderr)
	case cmd == "user":
		return userCmd(ctx, rest[0], rest[1:], stdout, stderr)
	case cmd == "apikey" && len(rest) > 0 && rest[0] == "revoke":
		return apikeyRevoke(ctx, rest[1:], stdout, stderr)
	case cmd == "client" && len(rest) > 0 && rest[0] == "create":
		return clientCreate(ctx, rest[1:], stdout, stderr)
	case cmd == "client" && len(rest) > 0 && rest[0] == "list":
		return clientList(ctx, rest[1:], stdout, stderr)
	case cmd == "client" && len(rest) > 0 && rest[0] == "rotate-secret":
		return clientRotateSecret(ctx, rest[1:], stdout, stderr)
	case cmd == "client" && len(rest) > 0 && rest[0] == "delete":
		return clientDelete(ctx, rest[1:], stdout, stderr)
	case cmd == "client" && len(rest) > 0 && rest[0] == "set-redirect-uris":
		return clientSetRedirectURIs(ctx, rest[1:], stdout, stderr)
	case cmd == "client" && len(rest) > 0 && rest[0] == "set-require-par":
		return clientSetRequirePAR(ctx, rest[1:], stdout, stderr)
	case cmd == "client" && len(rest) > 0 && rest[0] == "set-id-token-alg":
		return clientSetIDTokenAlg(ctx, rest[1:], stdout, stderr)
	case cmd == "client" && len(rest) > 0 && rest[0] == "set-access-token":
		return clientSetAccessToken(ctx, rest[1:], stdout, stderr)
	case (cmd == "keys" || cmd == "key") && len(rest) > 0 && rest[0] == "rotate":
		return keyRotate(ctx, rest[1:], stdout, stderr)
	case cmd == "enroll-link":
		return enrollLink(ctx, rest, stdout, stderr)
	case cmd == "webhook" && len(rest) > 0 && rest[0] == "add":
		return webhookAdd(ctx, rest[1:], stdout, stderr)
	case cmd == "webhook" && len(rest) > 0 && rest[0] == "list":
		return webhookList(ctx, rest[1:], stdout, stderr)
	case cmd == "webhook" && len(rest) > 0 && (rest[0] == "delete" || rest[0] == "resume"):
		return webhookByID(ctx, rest[0], rest[1:], stdout, stderr)
	case cmd == "events":
		return eventsCmd(ctx, rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "idp: unknown command %q\n\n%s", joinArgs(args, 2), usage)
		return &cli.UsageError{Msg: fmt.Sprintf("unknown command %q", joinArgs(args, 2)), Printed: true}
	}
}

const usage = `Usage:
  idp [flags]                                   run the identity service
  idp tenant create <id> [--name N] [-db DB]    create a tenant
  idp tenant list [--after ID] [--limit N] [-db DB]
                                                list the tenants, ordered by id, N at a time
                                                (default 100, at most 1000): id, name, created,
                                                the look of those that have one, and
                                                second_factor=picture-or-passkey of those that
                                                allow passkeys; when more follow, a last line
                                                "next: …" is the command that lists them
                                                (--after the page's last id)
  idp tenant set --tenant T [--display-name N] [--logo FILE] [--accent-color #RRGGBB]
                  [--default-language L] [--passkeys allowed|off] [-db DB]
                                                change how tenant T's sign-in pages look: its
                                                name, a PNG, JPEG, WebP or SVG logo of at most
                                                256 KiB, the buttons' colour (contrast of at
                                                least 4.5:1 with the page and white text), and
                                                the language of its pages when the browser asks
                                                for none they have; "" resets a value;
                                                --passkeys allowed lets its users add a passkey
                                                as a second way through the second factor, off
                                                (the default) allows the picture password only
  idp apikey create --tenant T [--name N] [-db DB]
                                                issue a SCIM API key for tenant T
  idp apikey list --tenant T [-db DB]           list the API keys that may act on tenant T: id, name,
                                                created, last used, revoked (never secrets)
  idp apikey revoke <key id> [-db DB]           revoke an API key (key_…)
  idp client create --tenant T --name N [--description D] --redirect-uri U… [--require-par]
                  [--id-token-alg ALG] [--access-token] [-db DB]
                                                register an OpenID client of tenant T; prints
                                                client_id=…, client_secret=… (shown this once),
                                                redirect_uri=… lines, require_par=…,
                                                id_token_alg=… and access_token=…;
                                                --require-par: the client must start every
                                                sign-in with a pushed authorization request;
                                                --id-token-alg: EdDSA (default), RS256, ES256
                                                or Ed25519; --access-token: an access token
                                                good only at the UserInfo endpoint, for client
                                                libraries that require one
  idp client list --tenant T [-db DB]           list the OpenID clients of tenant T
  idp client rotate-secret --tenant T <client id> [-db DB]
                                                give a client a new secret; the old one stops
                                                working at once
  idp client delete --tenant T <client id> [-db DB]
                                                delete a client (client_…)
  idp client set-redirect-uris --tenant T <client id> --redirect-uri U… [-db DB]
                                                replace a client's redirect URIs
  idp client set-require-par --tenant T <client id> [--require-par=false] [-db DB]
                                                require (or no longer require) pushed
                                                authorization requests of a client
  idp client set-id-token-alg --tenant T <client id> ALG [-db DB]
                                                sign a client's ID tokens with ALG (EdDSA,
                                                RS256, ES256 or Ed25519)
  idp client set-access-token --tenant T <client id> [--access-token=false] [-db DB]
                                                give (or no longer give) a client an access
                                                token for the UserInfo endpoint
  idp keys rotate [--tenant T | --after T] [--batch N] [-db DB]
                                                give every tenant (or tenant T) new signing
                                                keys, published at once, signing after 6
                                                minutes (signs_from=…), so relying parties
                                                know them first; the old ones stay published
                                                until their tokens expire. Every tenant goes
                                                in batches of N (500), each ending with
                                                rotated_through=T; --after T resumes after T
  idp enroll-link --tenant T --user U [-base-url URL] [-db DB]
                                                make a one-time link (valid 10 minutes) with
                                                which user U sets up a picture password (or adds
                                                a passkey, where the tenant allows them) at the
                                                service's URL (default http://localhost:8080);
                                                prints enrollment_url=… and expires=…
  idp user show --tenant T --user U [-db DB]    show user U (userName, primary email or id):
                                                active, picture password enrolled, failures,
                                                locked until, each lock in force (lock=all
                                                for every network, lock=NETWORK for one), and
                                                each familiar network (familiar=NETWORK: the
                                                user passed there lately, lock=all spares it),
                                                then passkeys=N and a line per passkey:
                                                passkey=ID name=… created=… last_used=…
                                                backup_eligible=… sign_count=…
  idp user unlock --tenant T --user U [-db DB]  clear the failed attempts of U's picture
                                                 password from every network, ending every
                                                 lock, so U may sign in again at once
  idp user remove-passkey --tenant T --user U --passkey ID [-db DB]
                                                remove U's passkey ID (base64url, as user show
                                                prints it); prints user_id=…,
                                                removed_passkey=ID and passkeys_left=N
  idp webhook add --tenant T --url U [--types T1,T2] [--allow-http-loopback]
                  [--allow-private-targets] [-db DB]
                                                send tenant T's events to U (https, on a public
                                                address; for development only, a loopback,
                                                private or link-local host with
                                                --allow-private-targets, and http on loopback
                                                with --allow-http-loopback as well);
                                                prints webhook_id=… and webhook_secret=… (shown
                                                this once); the service delivers them
  idp webhook list --tenant T [-db DB]          list tenant T's endpoints and their delivery
                                                (status, next_attempt)
  idp webhook delete --tenant T <webhook id> [-db DB]
                                                delete an endpoint (webhook_…)
  idp webhook resume --tenant T <webhook id> [-db DB]
                                                deliver again to an endpoint marked failing,
                                                or retry a retrying one now
  idp events --tenant T [--after C] [--follow] [-db DB]
                                                print tenant T's events, one JSON object a
                                                line, oldest first; --follow waits for more
  idp help [COMMAND]                            print this help, or the part about COMMAND
  idp version                                   print the module version and VCS revision

Flags of the service:
  -addr HOST:PORT    the address to listen on (default 127.0.0.1:8080; port 0 picks a free port)
  -base-url URL      the URL clients reach the service at (default http:// and the address, with
                     localhost for 127.0.0.1 and [::1]: a passkey needs a domain, not an IP)
  -db DB             the store: sqlite:PATH (default sqlite:idp.db), postgres://… or memory
  -demo              demo mode: create the tenant "demo", user alice, a SCIM API key and the
                     client of examples/rp, and print their secrets (default: on for SQLite and
                     memory, off for PostgreSQL; -demo=false turns it off)
  -log-level LEVEL   debug, info, warn or error (default info); logs go to stderr
  -access-log-delay D
                     how long a request's access log line may wait in memory to be written with
                     others in one write (default 100ms, at most 10s; 0 writes each at once);
                     the service's other log lines are written at once, after those waiting
  -redis URL         redis://HOST:PORT/DB: share the SCIM rate limits (200 requests a minute per
                     API key and tenant) and the sign-in pages' limit (60 requests a minute per
                     address) with every instance that uses the same Redis
  -event-retention D how long the events of every tenant are kept (default 720h, 30 days); the
                     service posts them to the webhook endpoints of "idp webhook add" meanwhile
  -webhook-allow-private-targets
                     deliver events to endpoints on loopback, private and link-local addresses
                     too (development only; refused by default, at each connection)
  -require-par       every client must start sign-ins with a pushed authorization request
                     (RFC 9126); without it only clients registered with --require-par must
  -admin-addr ADDR   the address of the admin server: /metrics (Prometheus), /healthz and
                     /readyz (default 127.0.0.1:9090, off the public port; "" for none)
  -trusted-proxy CIDR
                     a reverse proxy or load balancer in front (a CIDR or an address; repeat it
                     or give a comma list): a request from it names its client in the right-most
                     X-Forwarded-For address that is not a trusted proxy (default: none, every
                     request's client is its connection's peer)
  -scim-rate N/UNIT  SCIM requests per API key and tenant: N a second (s), minute (min) or
                     hour (h), such as 25/s (default 200/min)
  -scim-burst N      SCIM requests a key may make at once (default 0: N of -scim-rate)
  -scim-extension FILE
                     add the SCIM extension schemas of FILE, a JSON array of
                     {"resourceType": "User"|"Group", "required": bool, "schema": {…}}
                     (RFC 7643 §7), to Users or Groups; may repeat
  -scim-group-no-content
                     answer SCIM PUT and PATCH of a group with 204 No Content instead of 200
                     with the group (Entra ID and Okta accept it): a write then never reads a
                     large group's members to answer, and the client sees the group only by GET

Flags may come before or after a command: "idp -db DB tenant list" is "idp tenant list -db DB".
Admin commands never create a store: on a -db without one they stop with exit status 1.
A command that takes --tenant refuses a tenant that is not in the store (exit status 1).

--redirect-uri repeats, one URI each time. A redirect URI is an absolute https URL (http only for
127.0.0.1, [::1] or localhost), without fragment or user info; it is compared exactly.

In demo mode the service creates on start, unless it exists, the tenant "demo" with an API key,
an OpenID client for examples/rp and the user alice with a picture password, and prints to
stdout, one per line and before a blank line: tenant=…, scim_base_url=…, scim_api_key=…,
issuer=…, client_id=…, client_secret=…, redirect_uri=…, demo_user=…, demo_image=… and
demo_points=…. Outside demo mode it prints base_url=… and tenants=N, and on a store without
tenants the commands that create the first tenant, its API key and its client.
`

// isCommandWord reports whether arg is the next word of an idp command, given the words
// before it: a command ("tenant", "events"), or a subcommand of a group ("list" of "tenant").
func isCommandWord(words []string, arg string) bool {
	switch len(words) {
	case 0:
		return subcommands(arg) != nil || arg == "enroll-link" || arg == "events" || arg == "help" || arg == "version"
	case 1:
		return slices.Contains(subcommands(words[0]), arg)
	}
	return false
}

// joinArgs is up to n of args, joined by spaces, for an error message.
func joinArgs(args []string, n int) string {
	return strings.Join(args[:min(n, len(args))], " ")
}

// exitCode is cli.ExitCode for idp: it reports err on stderr, unless already reported, and
// returns the exit status for it.
func exitCode(err error, stderr io.Writer) int {
	return cli.ExitCode(err, stderr, "idp", "idp help")
}
