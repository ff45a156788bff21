package sqlstore_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// privateServer is a PostgreSQL server of a test's own, in a temporary directory, on a port of
// its own: a test may stop it, start it again or exhaust it without touching the shared server
// of VISID_TEST_POSTGRES_DSN.
type privateServer struct {
	bin  string // the directory of initdb and pg_ctl
	dir  string // the data directory's parent: the socket and the log live here
	port int
	opts []string // postgres options of every start
	as   *user.User
	dsn  string
}

// privatePostgres initialises and starts a private server with the postgres options opts
// ("-c", "name=value", …) and stops it when t ends. It needs PostgreSQL's server binaries
// (/usr/lib/postgresql/*/bin); as root, where initdb refuses to run, it runs them as the user
// postgres. It skips t when that is impossible, and fails it instead when
// VISID_REQUIRE_SERVICES=1 (as in .ci/run).
func privatePostgres(t *testing.T, opts ...string) *privateServer {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		msg := "a private PostgreSQL server cannot be started: " + fmt.Sprintf(format, args...)
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		skip("no initdb under /usr/lib/postgresql/*/bin")
	}
	sort.Strings(bins)
	pg := &privateServer{bin: filepath.Dir(bins[len(bins)-1]), opts: opts}
	dir, err := os.MkdirTemp("", "visid-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pg.dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			skip("running as root, and there is no user postgres to run initdb as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		pg.as = u
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pg.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	if out, err := pg.run("initdb", "-D", pg.data(), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"); err != nil {
		skip("initdb: %v\n%s", err, out)
	}
	pg.dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.port)
	pg.start(t)
	t.Cleanup(func() { pg.run("pg_ctl", "-D", pg.data(), "-m", "immediate", "stop") })
	return pg
}

func (pg *privateServer) data() string { return filepath.Join(pg.dir, "data") }

// start starts the server and waits until it accepts connections.
func (pg *privateServer) start(t *testing.T) {
	t.Helper()
	o := append([]string{"-p", strconv.Itoa(pg.port), "-k", pg.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"}, pg.opts...)
	out, err := pg.run("pg_ctl", "-D", pg.data(), "-l", filepath.Join(pg.dir, "log"), "-w", "-o", strings.Join(o, " "), "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(pg.dir, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// stop stops the server at once, as a crash or a failover would: clients' connections break.
func (pg *privateServer) stop(t *testing.T) {
	t.Helper()
	if out, err := pg.run("pg_ctl", "-D", pg.data(), "-m", "fast", "-w", "stop"); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// run runs one of the server's programs, as the user postgres when the test runs as root.
func (pg *privateServer) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(pg.bin, name)
	if pg.as == nil {
		return exec.Command(path, args...).CombinedOutput()
	}
	quoted := make([]string, 0, len(args)+1)
	for _, a := range append([]string{path}, args...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return exec.Command("su", pg.as.Username, "-s", "/bin/sh", "-c", strings.Join(quoted, " ")).CombinedOutput()
}
