package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// printVersion writes "idp MODULE VERSION (revision REV[, modified])": the module's version
// and the VCS revision the program was built from, as the build info records them; "(devel)"
// for a version go build did not stamp and "unknown" for a revision it did not.
func printVersion(w io.Writer) {
	path, version, revision, modified := "github.com/visid/visid", "(devel)", "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path != "" {
			path = bi.Main.Path
		}
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		revision += ", modified"
	}
	fmt.Fprintf(w, "idp %s %s (revision %s)\n", path, version, revision)
}

// isVersion reports whether arg asks for the version: version, -version or --version.
func isVersion(arg string) bool {
	return arg == "version" || arg == "-version" || arg == "--version"
}

// usageOf is the part of the usage about the commands of group ("tenant"): its lines and
// their continuations; "" for a group the usage does not have.
func usageOf(group string) string {
	var out strings.Builder
	in := false
	for line := range strings.Lines(usage) {
		switch {
		case strings.HasPrefix(line, "  idp "+group+" "):
			in = true
		case strings.HasPrefix(line, "  idp "), strings.TrimSpace(line) == "", !strings.HasPrefix(line, "  "):
			in = false
		}
		if in {
			out.WriteString(line)
		}
	}
	if out.Len() == 0 {
		return ""
	}
	return "Usage:\n" + out.String() + "\nFlags may come before or after a command. The whole help: idp help\n"
}
