package httpserve

import (
	"fmt"
	"net"
)

// BaseURL is the http:// URL a client on this host reaches a listening address at: an
// unspecified IP (":8080", "0.0.0.0:8080") becomes localhost.
func BaseURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}
