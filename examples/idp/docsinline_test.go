package main

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// inlineIdpCommand finds a command of the identity service in inline code: `idp …` or
// `go run ./examples/idp …`.
var inlineIdpCommand = regexp.MustCompile("`(?:go run \\./examples/idp|idp)((?: [^`]*)?)`")

// commandLike is a word that may be a command or subcommand of idp.
var commandLike = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// usageFlags are the flags the help names, with their dashes.
var usageFlags = regexp.MustCompile(`(?:^|[\s\[(,"])(--?[a-z][a-z0-9-]*)`)

// TestDocsInlineCommands: every idp command the README and docs/ name in running text, not
// only in shell blocks, is a real command (its help answers), and every flag it names is one
// the help lists (a command "idp serve" or a flag "--color" is caught).
func TestDocsInlineCommands(t *testing.T) {
	known := map[string]bool{"-h": true, "--help": true, "-help": true, "-version": true, "--version": true}
	for _, m := range usageFlags.FindAllStringSubmatch(usage, -1) {
		known[m[1]] = true
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // nothing is to serve
	n := 0
	for _, page := range docPages(t) {
		for _, m := range inlineIdpCommand.FindAllStringSubmatch(page.text, -1) {
			n++
			line := "idp" + m[1]
			// The command and subcommand: the leading lower-case words (not placeholders such
			// as T or <client id>).
			var words []string
			for _, w := range strings.Fields(strings.ReplaceAll(m[1], "…", " ")) {
				if len(words) == 2 || !commandLike.MatchString(w) {
					break
				}
				words = append(words, w)
			}
			var stdout, stderr bytes.Buffer
			if err := run(ctx, append(slices.Clone(words), "-h"), &stdout, &stderr); err != nil {
				t.Errorf("%s: `%s`: not a command: %v", page.path, line, err)
			}
			for _, w := range strings.Fields(m[1]) {
				name, _, _ := strings.Cut(w, "=")
				if strings.HasPrefix(name, "-") && len(name) > 1 && !known[name] {
					t.Errorf("%s: `%s`: idp help lists no flag %s", page.path, line, name)
				}
			}
		}
	}
	assert.Greater(t, n, 20, "inline commands found")
}

// shellVar is a use of a shell variable: $NAME or ${NAME}.
var shellVar = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// shellAssign is an assignment of a shell variable: NAME=… (export NAME=…).
var shellAssign = regexp.MustCompile(`(?:^|[\s;(])([A-Za-z_][A-Za-z0-9_]*)=`)

// TestDocsShellVariables: a shell block uses only the README's variables (BASE, KEY, ID: the
// tenant's SCIM base URL, an API key, a user's id), those it sets itself, and those a comment
// of the block says where to get; and $BASE already names the tenant, so no block adds one.
func TestDocsShellVariables(t *testing.T) {
	pages := docPages(t)
	readme := map[string]bool{}
	for _, b := range codeBlocks(pages[0]) {
		if b.lang == "sh" {
			for _, m := range shellAssign.FindAllStringSubmatch(b.text, -1) {
				readme[m[1]] = true
			}
		}
	}
	for _, v := range []string{"BASE", "KEY", "ID"} {
		require.True(t, readme[v], "the README sets $%s", v)
	}
	tenantAfterBase := regexp.MustCompile(`\$\{?BASE\}?/(acme|demo|\{tenant\}|T)/`)
	for _, page := range pages {
		for _, b := range codeBlocks(page) {
			if b.lang != "sh" {
				continue
			}
			own, comments := map[string]bool{}, ""
			for line := range strings.Lines(b.text) {
				if strings.HasPrefix(strings.TrimSpace(line), "#") {
					comments += line
				}
			}
			for _, m := range shellAssign.FindAllStringSubmatch(b.text, -1) {
				own[m[1]] = true
			}
			for _, m := range shellVar.FindAllStringSubmatch(b.text, -1) {
				v := m[1]
				if readme[v] || own[v] || regexp.MustCompile(`\b`+v+`\b`).MatchString(comments) {
					continue
				}
				t.Errorf("%s:%d: $%s is not a variable of the README (BASE, KEY, ID), nor set or explained in the block", page.path, b.line, v)
			}
			if m := tenantAfterBase.FindString(b.text); m != "" {
				t.Errorf("%s:%d: %s: the README's $BASE is the tenant's SCIM base URL already", page.path, b.line, m)
			}
		}
	}
}

// accentContrastInDocs finds the message idp tenant set gives for a colour without enough
// contrast, as the docs quote it.
var accentContrastInDocs = regexp.MustCompile(`accent colour (#[0-9a-fA-F]{6}) has a contrast ratio of ([0-9.]+):1`)

// TestDocsContrastFigures: a contrast ratio the docs quote from the accent colour check is the
// one the check computes.
func TestDocsContrastFigures(t *testing.T) {
	n := 0
	for _, page := range docPages(t) {
		text := strings.ReplaceAll(page.text, "\n", " ")
		text = regexp.MustCompile(`\s+`).ReplaceAllString(text, " ")
		for _, m := range accentContrastInDocs.FindAllStringSubmatch(text, -1) {
			n++
			_, err := store.CheckAccentColor(m[1])
			require.Error(t, err, "%s: %s passes the check", page.path, m[1])
			assert.Contains(t, err.Error(), "contrast ratio of "+m[2]+":1", "%s: %s", page.path, m[0])
		}
	}
	assert.Positive(t, n, "a quoted figure")
}
