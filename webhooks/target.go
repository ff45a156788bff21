package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"

	"github.com/visid/visid/store"
)

// ErrPrivateTarget is the error (wrapped) of an endpoint, or of a connection, whose host is not
// a public address: loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local
// (169.254/16, the cloud metadata address among them, fe80::/10), shared (100.64/10),
// unspecified (0.0.0.0, ::), "this network" (0/8), reserved (240/4, broadcast), benchmarking
// (198.18/15), IETF protocol assignments (192.0.0/24), site-local (fec0::/10), multicast, and
// these in IPv4-mapped, IPv4-compatible, NAT64 (64:ff9b::/96) and 6to4 (2002::/16) forms. visid
// never sends events to such a host unless the operator opted in for development
// (EndpointSpec.AllowPrivateTargets, Config.AllowPrivateTargets): otherwise whoever may add an
// endpoint could make visid reach services that only the network trusts.
var ErrPrivateTarget = errors.New("not a public address")

// refusedPrefixes are the ranges refused beyond what netip.Addr's predicates name.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("fec0::/10"),
}

// Prefixes of IPv6 addresses that carry an IPv4 address, which is checked in turn.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	compatible = netip.MustParsePrefix("::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// PrivateAddr reports whether a is an address visid does not send events to without the
// development opt-in (see ErrPrivateTarget).
func PrivateAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsMulticast() ||
		a.IsUnspecified() || a.IsInterfaceLocalMulticast() || a.IsLinkLocalMulticast() {
		return true
	}
	for _, p := range refusedPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a) || compatible.Contains(a):
			return PrivateAddr(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return PrivateAddr(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return false
}

// CheckTarget reports whether the host of the endpoint URL raw is public. An IP address is
// checked as it is; localhost and the names below .localhost are refused; another name is
// resolved with resolver (nil: net.DefaultResolver) and refused if any of its addresses is not
// public. A name that does not resolve now is accepted: the Deliverer checks every address it
// connects to anyway, after its own resolution, so a name that later resolves to an internal
// address (DNS rebinding) gets no request either. The error wraps ErrPrivateTarget and
// store.ErrInvalid.
func CheckTarget(ctx context.Context, raw string, resolver *net.Resolver) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("webhooks: the endpoint URL is not an absolute URL with a host: %w", store.ErrInvalid)
	}
	host := u.Hostname()
	refuse := func(addr string) error {
		return fmt.Errorf("webhooks: the endpoint URL's host %s is %w: a loopback, private, link-local or other internal host needs AllowPrivateTargets (for development only): %w",
			addr, ErrPrivateTarget, store.ErrInvalid)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if PrivateAddr(a) {
			return refuse(host)
		}
		return nil
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return refuse(host)
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // not resolvable now: the dial-time check decides later
	}
	for _, a := range addrs {
		if PrivateAddr(a) {
			return refuse(host + " resolves to " + a.Unmap().String())
		}
	}
	return nil
}

// DialControl is a net.Dialer Control function that refuses a connection to an address that
// is not public (ErrPrivateTarget). It runs after name resolution, on the very address about to
// be connected, so neither a name that resolves to an internal address nor one that changes its
// answer after the endpoint was added (DNS rebinding) gets round it. The Deliverer's default
// client uses it; a Client given in Config should use it too.
func DialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhooks: the address %q cannot be read, so it counts as %w", address, ErrPrivateTarget)
	}
	if PrivateAddr(ap.Addr()) {
		return fmt.Errorf("webhooks: %s is %w; Config.AllowPrivateTargets allows it (for development only)", ap.Addr().Unmap(), ErrPrivateTarget)
	}
	return nil
}
