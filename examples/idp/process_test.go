package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// buildIDP builds the program into a temporary directory and returns the binary's path. It
// skips the test where a binary cannot be built or signalled.
func buildIDP(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs POSIX signals")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	bin := filepath.Join(t.TempDir(), "idp")
	out, err := exec.CommandContext(t.Context(), goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// readVars reads the key=value lines the service prints before a blank line.
func readVars(r *bufio.Reader) (lines []string, vars map[string]string, err error) {
	vars = map[string]string{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return lines, vars, fmt.Errorf("reading the service's stdout after %q: %w", lines, err)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return lines, vars, nil
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return lines, vars, fmt.Errorf("not a key=value line: %q", line)
		}
		lines = append(lines, line)
		vars[k] = v
	}
}

// process is the service running as a separate process of the built binary.
type process struct {
	cmd    *exec.Cmd
	lines  []string          // the key=value lines, in order
	vars   map[string]string // the same, by key
	addr   string            // the address it listens on, from its log
	admin  string            // the address of its admin server, from its log
	stderr *syncBuffer       // its log
	exited chan struct{}     // closed when it has exited
	err    error             // what Wait returned, once exited is closed
}

// listeningRE finds the address in the log line the service writes once it listens.
var listeningRE = regexp.MustCompile(`msg="identity service listening" addr=(\S+)`)

// adminRE finds the address of the admin server in the service's log.
var adminRE = regexp.MustCompile(`msg="admin server listening" addr=(\S+)`)

// startProcess runs bin with args in dir, with env added to this process's environment, and
// waits until it listens and has printed its key=value lines. It is killed when the test ends,
// and its log is written to the test's output if the test failed.
func startProcess(t *testing.T, bin, dir string, env []string, args ...string) *process {
	t.Helper()
	if !slices.Contains(args, "-admin-addr") {
		args = append(args, "-admin-addr", "127.0.0.1:0") // tests run side by side: never the default port
	}
	p := &process{stderr: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("log of %s %q:\n%s", filepath.Base(bin), args, p.stderr)
		}
	})
	r := bufio.NewReader(stdout)
	read := make(chan error, 1)
	go func() {
		var err error
		p.lines, p.vars, err = readVars(r)
		read <- err
		_, _ = io.Copy(io.Discard, r) // the service must never block on stdout
	}()
	select {
	case err := <-read:
		require.NoError(t, err, "log:\n%s", p.stderr)
	case <-time.After(time.Minute):
		t.Fatalf("the service printed nothing in a minute; log:\n%s", p.stderr)
	}
	// The log line comes before the key=value lines, but through another pipe.
	require.Eventually(t, func() bool { return listeningRE.MatchString(p.stderr.String()) }, 10*time.Second,
		10*time.Millisecond, "no listening line in the log:\n%s", p.stderr)
	p.addr = listeningRE.FindStringSubmatch(p.stderr.String())[1]
	if m := adminRE.FindStringSubmatch(p.stderr.String()); m != nil {
		p.admin = m[1]
	}
	return p
}

// kill stops the process with SIGKILL, as a crash or an out-of-memory kill would, and waits
// for it to exit.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}
