package oidc2fa_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/oidc2fa"
)

func TestRedactPath(t *testing.T) {
	for in, want := range map[string]string{
		"/enroll/acme/tok_abcdef":                "/enroll/acme/…",
		"/enroll/acme/tok_abcdef/extra":          "/enroll/acme/…",
		"/enroll/acme":                           "/enroll/acme",
		"/enroll/acme/":                          "/enroll/acme/",
		"/login/acme/abc123":                     "/login/acme/…",
		"/login/acme/abc123/image":               "/login/acme/…/image",
		"/enrollment/acme/abc123/pick/3":         "/enrollment/acme/…/pick/3",
		"//login/acme/abc123":                    "//login/acme/…",
		"/authorize/acme":                        "/authorize/acme",
		"/token/acme":                            "/token/acme",
		"/jwks/acme":                             "/jwks/acme",
		"/acme/.well-known/openid-configuration": "/acme/.well-known/openid-configuration",
		"/logo/acme/hash":                        "/logo/acme/hash",
		"":                                       "",
		"/":                                      "/",
		"/login":                                 "/login",
	} {
		assert.Equal(t, want, oidc2fa.RedactPath(in), in)
	}
}
