package csp

import "testing"

func TestWithSource(t *testing.T) {
	const policy = "default-src 'none'; style-src 'self'; base-uri 'none'; frame-ancestors 'none'"
	for _, tc := range []struct{ directive, source, want string }{
		{"style-src", "'sha256-x'", "default-src 'none'; style-src 'self' 'sha256-x'; base-uri 'none'; frame-ancestors 'none'"},
		{"img-src", "'self'", "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'"},
	} {
		if got := WithSource(policy, tc.directive, tc.source); got != tc.want {
			t.Errorf("WithSource(%q, %q):\n got %q\nwant %q", tc.directive, tc.source, got, tc.want)
		}
	}
}
