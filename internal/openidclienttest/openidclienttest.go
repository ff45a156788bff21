// Package openidclienttest runs visid's tests with npm's openid-client 6, the OpenID client of
// Node.js applications: an unpatched, independent relying party.
//
// The package is installed outside the module, by .ci/run:
//
//	dir=$(mktemp -d) && cd "$dir" && npm install openid-client@6.8.9
//	export VISID_OPENID_CLIENT_DIR=$dir
//
// A test that needs it calls Script; without VISID_OPENID_CLIENT_DIR or node it skips, unless
// VISID_REQUIRE_SERVICES=1, when it fails.
package openidclienttest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Version is the openid-client version .ci/run installs.
const Version = "6.8.9"

// EnvDir names the variable that holds the directory where openid-client is installed (its
// node_modules inside).
const EnvDir = "VISID_OPENID_CLIENT_DIR"

// Script copies the Node.js script at path (a .mjs file) into the installation directory,
// where Node resolves openid-client from, and returns a function that runs it with args and
// returns what it prints; a failure of the script fails the test with its stderr.
func Script(t *testing.T, path string) func(args ...string) []byte {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	dir := os.Getenv(EnvDir)
	if dir == "" {
		unavailable("%s is not set: install openid-client %s with npm and point it there (.ci/run does)", EnvDir, Version)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openid-client", "package.json")); err != nil {
		unavailable("openid-client is not installed in %s=%s: %v", EnvDir, dir, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not installed: %v", err)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Copied, not linked: Node resolves packages from the script's real directory. A file of
	// its own per test, as tests of several packages share the directory.
	f, err := os.CreateTemp(dir, "visid-test-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	if _, err := f.Write(src); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{f.Name()}, args...)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("node %s: %v\n%s", path, err, stderr)
		}
		return out
	}
}
