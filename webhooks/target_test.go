package webhooks_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/webhooks"
)

// internalHosts are hosts of endpoints that would let whoever adds an endpoint make visid reach
// services only the network trusts (SSRF).
var internalHosts = []string{
	"127.0.0.1", "127.8.9.10", "169.254.169.254", "10.0.0.1", "10.255.255.255", "172.16.0.1",
	"172.31.255.254", "192.168.1.1", "100.64.0.1", "100.127.255.254", "0.0.0.0", "0.1.2.3",
	"255.255.255.255", "224.0.0.1", "239.1.2.3", "198.18.0.1", "192.0.0.8",
	"[::1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:169.254.169.254]", "[::ffff:a00:1]",
	"[fd00::1]", "[fc00::1]", "[fe80::1]", "[fec0::1]", "[ff02::1]", "[ff05::2]",
	"[64:ff9b::7f00:1]", "[2002:c0a8:101::1]", "[::127.0.0.1]",
	"localhost", "LOCALHOST.", "api.localhost",
}

// TestAddEndpointRefusesInternalHosts: AddEndpoint refuses an endpoint whose host is an internal
// address, in any of its written forms, or a name that resolves to one, with an error that
// wraps ErrPrivateTarget and store.ErrInvalid and names the option; AllowPrivateTargets lets it
// through; public addresses pass.
func TestAddEndpointRefusesInternalHosts(t *testing.T) {
	b := memstore.New().Backend()
	ctx := context.Background()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	for _, host := range internalHosts {
		t.Run(host, func(t *testing.T) {
			url := "https://" + host + ":8443/hook"
			_, _, err := webhooks.AddEndpoint(ctx, b.Webhooks, webhooks.EndpointSpec{Tenant: "acme", URL: url})
			require.ErrorIs(t, err, webhooks.ErrPrivateTarget)
			require.ErrorIs(t, err, store.ErrInvalid)
			assert.Contains(t, err.Error(), "AllowPrivateTargets")
			_, _, err = webhooks.AddEndpoint(ctx, b.Webhooks, webhooks.EndpointSpec{Tenant: "acme", URL: url, AllowPrivateTargets: true})
			require.NoError(t, err, "the development opt-in")
		})
	}
	// http on loopback needs both opt-ins: one does not imply the other.
	_, _, err := webhooks.AddEndpoint(ctx, b.Webhooks, webhooks.EndpointSpec{Tenant: "acme", URL: "http://127.0.0.1:9000/h", AllowLoopbackHTTP: true})
	require.ErrorIs(t, err, webhooks.ErrPrivateTarget)
	_, _, err = webhooks.AddEndpoint(ctx, b.Webhooks, webhooks.EndpointSpec{Tenant: "acme", URL: "http://127.0.0.1:9000/h", AllowPrivateTargets: true})
	require.ErrorIs(t, err, store.ErrInvalid)
	require.NotErrorIs(t, err, webhooks.ErrPrivateTarget)

	for _, host := range []string{"93.184.215.14", "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]", "8.8.8.8", "172.32.0.1", "100.128.0.1", "[::ffff:8.8.8.8]"} {
		_, _, err := webhooks.AddEndpoint(ctx, b.Webhooks, webhooks.EndpointSpec{Tenant: "acme", URL: "https://" + host + "/hook"})
		assert.NoError(t, err, host)
	}
}

func TestPrivateAddr(t *testing.T) {
	for _, host := range internalHosts {
		a, err := netip.ParseAddr(strings.Trim(host, "[]"))
		if err != nil {
			continue // a name
		}
		assert.True(t, webhooks.PrivateAddr(a), host)
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"} {
		assert.False(t, webhooks.PrivateAddr(netip.MustParseAddr(s)), s)
	}
}

// TestDeliveryRefusesInternalAddressesAtDial: an endpoint whose host is or resolves to an
// internal address when the deliverer connects (stored before the check existed, or a name whose
// answer changed after it was added: DNS rebinding) gets no request; the delivery fails with
// the reason. With Config.AllowPrivateTargets the same endpoint gets the event.
func TestDeliveryRefusesInternalAddressesAtDial(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]"} {
		t.Run(host, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(srv.Close)
			port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
			ctx := context.Background()
			b := memstore.New().Backend()
			require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
			// Stored directly, as a name that resolved elsewhere when it was added would be.
			e, err := b.Webhooks.Create(ctx, store.WebhookEndpoint{Tenant: "acme", URL: "http://" + host + ":" + port + "/hook",
				Secret: mustSecret(t), Created: time.Now()})
			require.NoError(t, err)
			cctx := store.WithChange(ctx, store.Change{Actor: "key_1"})
			_, err = b.Users.Create(cctx, "acme", store.User{UserName: "u", Active: true})
			require.NoError(t, err)

			d, err := webhooks.NewDeliverer(webhooks.Config{Events: b.Events, Webhooks: b.Webhooks, Tenants: b.Tenants, Logger: quiet})
			require.NoError(t, err)
			_, err = d.RunOnce(ctx)
			require.NoError(t, err)
			got, err := b.Webhooks.Get(ctx, "acme", e.ID)
			require.NoError(t, err)
			assert.Contains(t, got.Delivery.LastError, "internal address")
			assert.Zero(t, hits.Load(), "the deliverer connected")

			d, err = webhooks.NewDeliverer(webhooks.Config{Events: b.Events, Webhooks: b.Webhooks, Tenants: b.Tenants, Logger: quiet,
				AllowPrivateTargets: true, Now: func() time.Time { return time.Now().Add(3 * time.Hour) }})
			require.NoError(t, err)
			_, err = d.RunOnce(ctx)
			require.NoError(t, err)
			assert.EqualValues(t, 1, hits.Load(), "the development opt-in")
		})
	}
}

// TestDeliveryFollowsNoRedirect: a 3xx answer is a failed attempt; the target it names gets
// nothing, even with private targets allowed.
func TestDeliveryFollowsNoRedirect(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(target.Close)
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirector := httptest.NewServer(http.RedirectHandler(target.URL+"/elsewhere", code))
		t.Cleanup(redirector.Close)
		ctx := context.Background()
		b := memstore.New().Backend()
		require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
		_, e, err := webhooks.AddEndpoint(ctx, b.Webhooks, webhooks.EndpointSpec{Tenant: "acme", URL: redirector.URL + "/hook",
			AllowLoopbackHTTP: true, AllowPrivateTargets: true})
		require.NoError(t, err)
		_, err = b.Users.Create(store.WithChange(ctx, store.Change{Actor: "key_1"}), "acme", store.User{UserName: "u", Active: true})
		require.NoError(t, err)
		d, err := webhooks.NewDeliverer(webhooks.Config{Events: b.Events, Webhooks: b.Webhooks, Tenants: b.Tenants, Logger: quiet, AllowPrivateTargets: true})
		require.NoError(t, err)
		_, err = d.RunOnce(ctx)
		require.NoError(t, err)
		got, err := b.Webhooks.Get(ctx, "acme", e.ID)
		require.NoError(t, err)
		assert.Equal(t, "status "+strconv.Itoa(code), got.Delivery.LastError)
	}
	assert.Zero(t, hits.Load(), "a redirect was followed")
}

func mustSecret(t *testing.T) string {
	t.Helper()
	s, err := webhooks.NewSecret()
	require.NoError(t, err)
	return s
}

// TestAddEndpointRefusesNamesOfInternalAddresses: a name whose DNS answer is an internal address
// is refused when the endpoint is added; one whose answer is public passes.
func TestAddEndpointRefusesNamesOfInternalAddresses(t *testing.T) {
	b := memstore.New().Backend()
	ctx := context.Background()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	for _, tc := range []struct {
		answer [4]byte
		want   error
	}{
		{[4]byte{10, 0, 0, 7}, webhooks.ErrPrivateTarget},
		{[4]byte{169, 254, 169, 254}, webhooks.ErrPrivateTarget},
		{[4]byte{127, 0, 0, 1}, webhooks.ErrPrivateTarget},
		{[4]byte{93, 184, 215, 14}, nil},
	} {
		_, _, err := webhooks.AddEndpoint(ctx, b.Webhooks, webhooks.EndpointSpec{Tenant: "acme",
			URL: "https://hooks.example.com/visid", Resolver: fakeDNS(tc.answer)})
		if tc.want == nil {
			assert.NoError(t, err, "%v", tc.answer)
		} else {
			assert.ErrorIs(t, err, tc.want, "%v", tc.answer)
			assert.ErrorContains(t, err, "resolves to")
		}
	}
}

// fakeDNS is a resolver whose server answers every A question with a and every other question
// with no answer, over a stream (DNS over TCP framing).
func fakeDNS(a [4]byte) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			for {
				var l [2]byte
				if _, err := io.ReadFull(server, l[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(server, q); err != nil {
					return
				}
				end := 12
				for q[end] != 0 {
					end += int(q[end]) + 1
				}
				end += 5 // the name's last byte, type and class
				qtype := binary.BigEndian.Uint16(q[end-4 : end-2])
				resp := append([]byte(nil), q[:end]...)
				binary.BigEndian.PutUint16(resp[2:], 0x8180) // a response, recursion available
				binary.BigEndian.PutUint16(resp[6:], 0)      // answers
				binary.BigEndian.PutUint16(resp[8:], 0)
				binary.BigEndian.PutUint16(resp[10:], 0)
				if qtype == 1 {
					binary.BigEndian.PutUint16(resp[6:], 1)
					resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
					resp = append(resp, a[:]...)
				}
				binary.BigEndian.PutUint16(l[:], uint16(len(resp)))
				if _, err := server.Write(append(l[:], resp...)); err != nil {
					return
				}
			}
		}()
		return client, nil
	}}
}
