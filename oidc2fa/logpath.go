package oidc2fa

import "strings"

// Redacted stands in a path for a secret that RedactPath took out.
const Redacted = "…"

// RedactPath returns p, the path of a request to the provider's handler relative to where it is
// mounted, with the secrets a path carries replaced by Redacted: the one-time token of an
// enrollment link (/enroll/{tenant}/{token}) and the id of a login or enrollment interaction
// (/login/{tenant}/{id}/…, /enrollment/{tenant}/{id}/…), with which whoever reads a log line
// could act in the person's place. Every other path is returned as it is. The provider's own log
// lines carry only redacted paths, and its spans and metrics no path at all; a host that logs
// requests (an access log) passes the path through RedactPath too:
//
//	path := r.URL.Path
//	if rest, ok := strings.CutPrefix(path, "/oidc"); ok { // where the host mounts the provider
//		path = "/oidc" + oidc2fa.RedactPath(rest)
//	}
func RedactPath(p string) string {
	rest := strings.TrimLeft(p, "/")
	head, rest, _ := strings.Cut(rest, "/")
	switch head {
	case "enroll", "login", "enrollment":
	default:
		return p
	}
	tenant, rest, found := strings.Cut(rest, "/")
	if !found || rest == "" {
		return p // /enroll/{tenant}: the endpoint a client's backend posts to, no secret
	}
	_, tail, more := strings.Cut(rest, "/")
	out := p[:len(p)-len(rest)-len(tenant)-1-len(head)-1] // the leading slashes as they were
	out += head + "/" + tenant + "/" + Redacted
	if more && head != "enroll" {
		out += "/" + tail
	}
	return out
}
