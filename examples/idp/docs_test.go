package main

import (
	"bytes"
	"context"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
)

// The README and the pages of docs/ are checked together: a test that looks for what the service
// prints, or that runs the commands and compiles the programs they show, reads them all.

// docPage is one Markdown file of the documentation: its path from the repository's root and
// its text.
type docPage struct {
	path, text string
}

// docPages returns README.md and every docs/*.md.
func docPages(t *testing.T) []docPage {
	t.Helper()
	paths, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, paths, "docs/*.md")
	paths = append([]string{"../../README.md"}, paths...)
	var pages []docPage
	for _, p := range paths {
		text, err := os.ReadFile(p)
		require.NoError(t, err)
		pages = append(pages, docPage{path: strings.TrimPrefix(p, "../../"), text: string(text)})
	}
	return pages
}

// allDocs is the text of every page, one after the other.
func allDocs(t *testing.T) string {
	var b strings.Builder
	for _, p := range docPages(t) {
		b.WriteString(p.text)
		b.WriteString("\n")
	}
	return b.String()
}

// codeBlock is a fenced block of a page: its language (the word after ```) and its lines.
type codeBlock struct {
	page, lang, text string
	line             int // the line of the opening fence, from 1
}

// codeBlocks returns the fenced blocks of page, indented ones (in lists) included.
func codeBlocks(page docPage) []codeBlock {
	var blocks []codeBlock
	var cur *codeBlock
	var body []string
	for i, line := range strings.Split(page.text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &codeBlock{page: page.path, lang: strings.TrimPrefix(trimmed, "```"), line: i + 1}
			body = nil
		case cur != nil && trimmed == "```":
			cur.text = strings.Join(body, "\n")
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body = append(body, line)
		}
	}
	return blocks
}

// TestDocsGoSnippetsParse: every Go block of the README and of docs/ is Go: a whole file, or
// declarations, or statements as the body of a function.
func TestDocsGoSnippetsParse(t *testing.T) {
	n := 0
	for _, page := range docPages(t) {
		for _, b := range codeBlocks(page) {
			if b.lang != "go" {
				continue
			}
			n++
			fset := token.NewFileSet()
			src := b.text
			_, errFile := parser.ParseFile(fset, "snippet.go", src, parser.SkipObjectResolution)
			if errFile == nil {
				continue
			}
			_, errDecl := parser.ParseFile(fset, "snippet.go", "package p\n"+src, parser.SkipObjectResolution)
			if errDecl == nil {
				continue
			}
			_, errStmt := parser.ParseFile(fset, "snippet.go", "package p\nfunc _() error {\n"+src+"\n}", parser.SkipObjectResolution)
			assert.NoError(t, errStmt, "%s:%d: the Go block is neither a file, nor declarations, nor statements", b.page, b.line)
		}
	}
	assert.Greater(t, n, 10, "Go blocks found")
}

// TestDocsGoPrograms builds every whole program (a Go block that begins with "package main") of
// the README and of docs/, with this module's packages.
func TestDocsGoPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	var programs []codeBlock
	for _, page := range docPages(t) {
		for _, b := range codeBlocks(page) {
			if b.lang == "go" && strings.HasPrefix(b.text, "package main\n") {
				programs = append(programs, b)
			}
		}
	}
	require.GreaterOrEqual(t, len(programs), 3, "programs in the docs")
	// The programs are built inside the module, in a directory the go command's patterns skip
	// (its name begins with "_"), so that they use this checkout's packages.
	dir, err := os.MkdirTemp("../..", "_docprograms")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	for i, p := range programs {
		t.Run(strings.TrimPrefix(p.page, "docs/"), func(t *testing.T) {
			pdir := filepath.Join(dir, string(rune('a'+i)))
			require.NoError(t, os.Mkdir(pdir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(pdir, "main.go"), []byte(p.text), 0o644))
			cmd := exec.Command("go", "vet", "./"+filepath.Base(dir)+"/"+filepath.Base(pdir))
			cmd.Dir = "../.."
			out, err := cmd.CombinedOutput()
			assert.NoError(t, err, "%s:%d: the program does not build:\n%s", p.page, p.line, out)
		})
	}
}

// docCommand is one command line of the identity service in a page.
type docCommand struct {
	page string
	args []string // after "go run ./examples/idp" (or "idp")
	line string
}

// idpCommandLine finds "go run ./examples/idp …" or "idp …" at the start of a shell line (after
// variable assignments) or of a comment that shows what the service prints.
var idpCommandLine = regexp.MustCompile(`^(?:#\s+)?(?:[A-Z_]+=\S+\s+)*(?:go run \./examples/idp|idp)(?:\s+(.*))?$`)

// docCommands returns the command lines of the identity service in the shell blocks of pages.
func docCommands(t *testing.T, pages []docPage) []docCommand {
	var cmds []docCommand
	for _, page := range pages {
		for _, b := range codeBlocks(page) {
			if b.lang != "sh" {
				continue
			}
			// Join continued lines.
			text := strings.ReplaceAll(b.text, "\\\n", " ")
			for _, line := range strings.Split(text, "\n") {
				line = strings.TrimSpace(line)
				m := idpCommandLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				rest := m[1]
				if strings.HasPrefix(rest, "#") {
					rest = "" // only a comment after the command
				}
				if i := strings.Index(rest, " # "); i >= 0 && strings.Count(rest[:i], "'")%2 == 0 && strings.Count(rest[:i], `"`)%2 == 0 {
					rest = rest[:i] // a comment after the command
				}
				var args []string
				for _, w := range shellWords(t, rest) {
					if w != "…" { // "and more of the same"
						args = append(args, w)
					}
				}
				cmds = append(cmds, docCommand{page: page.path, args: args, line: line})
			}
		}
	}
	return cmds
}

// TestDocsCommands runs every command of the identity service that the README and docs/ show,
// as far as it goes without a store: its command, subcommand and flags must be accepted (no
// usage error), and it must then stop only because the store it is given does not exist (or,
// for help, succeed). The service itself is not started: the check stops before it opens the
// store, so nothing listens and nothing is reached over the network.
func TestDocsCommands(t *testing.T) {
	pages := docPages(t)
	cmds := docCommands(t, pages)
	require.Greater(t, len(cmds), 20, "commands found")

	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(kekEnv, "")
	// A SCIM extension file the docs give as JSON and then pass to -scim-extension.
	for _, page := range pages {
		for _, b := range codeBlocks(page) {
			if b.lang == "json" && strings.HasPrefix(b.text, `[{"resourceType"`) {
				require.NoError(t, os.WriteFile("entra-ext.json", []byte(b.text), 0o644))
			}
		}
	}
	missing := filepath.Join(dir, "no-such-directory", "idp.db")
	seen := map[string]bool{}
	for _, c := range cmds {
		key := strings.Join(c.args, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		args := append(slices.Clone(c.args), "-db", "sqlite:"+missing)
		if len(c.args) > 0 && c.args[0] == "help" {
			args = c.args
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // nothing is to wait or serve
		var stdout, stderr bytes.Buffer
		err := run(ctx, args, &stdout, &stderr)
		var ue *cli.UsageError
		if errors.As(err, &ue) {
			t.Errorf("%s: %q: usage error: %v", c.page, c.line, err)
			continue
		}
		if len(c.args) > 0 && c.args[0] == "help" {
			assert.NoError(t, err, "%s: %q", c.page, c.line)
			continue
		}
		if assert.Error(t, err, "%s: %q", c.page, c.line) {
			assert.Contains(t, err.Error(), missing, "%s: %q: it stopped before it reached the store", c.page, c.line)
		}
	}
	_, err := os.Stat(missing)
	assert.True(t, errors.Is(err, os.ErrNotExist), "no store was created")
}

// TestDocsLinks: every relative link of the README and of docs/ names a file of the repository,
// and a heading of it when it has an #anchor.
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{} // path from the root → its headings' anchors
	for _, p := range docPages(t) {
		anchors[p.path] = headingAnchors(p.text)
	}
	n := 0
	for _, p := range docPages(t) {
		for _, m := range link.FindAllStringSubmatch(stripCode(p.text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			path := p.path
			if file != "" {
				path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(p.path), file)))
				_, err := os.Stat(filepath.Join("../..", path))
				if !assert.NoError(t, err, "%s: link %q", p.path, target) {
					continue
				}
			}
			if anchor == "" {
				continue
			}
			heads, ok := anchors[path]
			if assert.True(t, ok, "%s: link %q: an anchor in a file that is not a page", p.path, target) {
				assert.True(t, heads[anchor], "%s: link %q: %s has no heading %q", p.path, target, path, anchor)
			}
		}
	}
	assert.Greater(t, n, 30, "relative links found")
}

// headingAnchors returns the anchors GitHub gives the headings of a Markdown text: lower case,
// punctuation dropped, spaces as hyphens, "-1", "-2"… for repeats.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, line := range strings.Split(stripCode(text), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '…' && r != '—' && r != '×' && r != '§':
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := count[a]; n > 0 {
			out[a+"-"+string(rune('0'+n))] = true
		} else {
			out[a] = true
		}
		count[a]++
	}
	return out
}

// stripCode blanks the fenced blocks of a Markdown text, whose "#" lines are not headings and
// whose brackets are not links.
func stripCode(text string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			b.WriteString("\n")
			continue
		}
		if !in {
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestDocsCommandsFindMistakes: the command check finds an unknown flag, an unknown command and
// a flag of the service that does not exist.
func TestDocsCommandsFindMistakes(t *testing.T) {
	page := docPage{path: "x.md", text: "```sh\n" +
		"go run ./examples/idp tenant list --no-such-flag\n" +
		"idp tenant frobnicate\n" +
		"VISID_KEY_ENCRYPTION_KEY=… go run ./examples/idp -no-such-flag 1 \\\n  -db memory\n" +
		"# go run ./examples/idp -addr :9000   # a comment\n" +
		"```\n"}
	cmds := docCommands(t, []docPage{page})
	require.Len(t, cmds, 4)
	assert.Equal(t, []string{"-no-such-flag", "1", "-db", "memory"}, cmds[2].args)
	assert.Equal(t, []string{"-addr", ":9000"}, cmds[3].args)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, c := range cmds[:3] {
		err := run(ctx, append(c.args, "-db", "sqlite:"+filepath.Join(t.TempDir(), "none", "idp.db")), io.Discard, io.Discard)
		var ue *cli.UsageError
		assert.True(t, errors.As(err, &ue), "%q: %v", c.line, err)
	}
}
