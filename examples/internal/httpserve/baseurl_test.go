package httpserve_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/examples/internal/httpserve"
)

func TestBaseURL(t *testing.T) {
	for _, tt := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "http://127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "http://localhost:8080"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8081}, "http://localhost:8081"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8080}, "http://[::1]:8080"},
	} {
		assert.Equal(t, tt.want, httpserve.BaseURL(tt.addr), "%v", tt.addr)
	}
}
