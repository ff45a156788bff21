// Package csp edits the Content-Security-Policy headers of visid's pages.
package csp

import "strings"

// WithSource returns the Content-Security-Policy csp with source added to the end of its
// directive (which csp has), or the directive added before base-uri when it has not.
func WithSource(csp, directive, source string) string {
	i := strings.Index(csp, directive+" ")
	if i < 0 {
		return strings.Replace(csp, "base-uri", directive+" "+source+"; base-uri", 1)
	}
	end := i + strings.IndexByte(csp[i:], ';')
	return csp[:end] + " " + source + csp[end:]
}
