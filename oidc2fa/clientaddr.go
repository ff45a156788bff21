package oidc2fa

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP returns the address of the client that sent r: the connection's peer
// (r.RemoteAddr), unless the peer is in one of trustedProxies. Then it is the right-most
// address of X-Forwarded-For that is not in trustedProxies: each trusted proxy appends the
// address it was connected from, so the entries right of that one were written by trusted
// proxies, and those further left by the client, who may write anything. When every entry is
// trusted, it is the left-most; when a trusted hop forwarded an entry that is not an address,
// it is that hop. IPv4-mapped IPv6 addresses are returned as IPv4 and zones are dropped. The
// zero Addr when r.RemoteAddr is not an address (as in some tests).
//
// With no trustedProxies, X-Forwarded-For is never read: a client cannot choose its address.
func ClientIP(r *http.Request, trustedProxies []netip.Prefix) netip.Addr {
	addr, ok := parseHostAddr(r.RemoteAddr)
	if !ok {
		return netip.Addr{}
	}
	values := r.Header.Values("X-Forwarded-For")
	for i := len(values) - 1; i >= 0; i-- {
		entries := strings.Split(values[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			if !trusted(addr, trustedProxies) {
				return addr
			}
			next, ok := parseHostAddr(strings.TrimSpace(entries[j]))
			if !ok {
				return addr
			}
			addr = next
		}
	}
	return addr
}

// trusted reports whether addr is in one of proxies.
func trusted(addr netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// parseHostAddr parses an address with or without a port ("192.0.2.1", "192.0.2.1:4711",
// "2001:db8::1", "[2001:db8::1]:4711"), unmapped and without its zone.
func parseHostAddr(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// addressKey is the AddressLimiter's key of r's client: its address as ClientIP finds it
// behind Config.TrustedProxies, an IPv6 client's /64 (one subscriber's usual share), as
// ratelimit.ClientAddr names a connection's peer.
func (p *provider) addressKey(r *http.Request) string {
	a := ClientIP(r, p.cfg.TrustedProxies)
	switch {
	case !a.IsValid():
		return r.RemoteAddr
	case a.Is6():
		return netip.PrefixFrom(a, 64).Masked().String()
	}
	return a.String()
}
