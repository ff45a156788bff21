package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/store"
	"github.com/visid/visid/webhooks"
)

// Errors that name the flag that fixes them.

// listen listens on addr, the value of the flag name; its error names the flag and, when the
// address is taken, says what to do: fix is how to pick another.
func listen(ctx context.Context, name, addr, fix string) (net.Listener, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("-%s %s: the address is in use, by another program or another idp: %s", name, addr, fix)
	case err != nil:
		return nil, fmt.Errorf("-%s %s: %w", name, addr, err)
	}
	return ln, nil
}

// What to do when the address of -addr or -admin-addr is taken.
const (
	addrFix      = "stop it, or give another address with -addr HOST:PORT (port 0 picks a free one)"
	adminAddrFix = `stop it, or give another address with -admin-addr HOST:PORT (port 0 picks a free one), or -admin-addr "" for no admin server`
)

// webhookURLError is the usage error of webhook add's --url when webhooks.CheckURL refused it
// with err: an http URL that --allow-http-loopback would allow names that flag.
func webhookURLError(rawURL string, allowLoopback bool, err error) error {
	msg := "--url: " + strings.TrimSuffix(strings.TrimPrefix(err.Error(), "webhooks: "), ": "+store.ErrInvalid.Error())
	if !allowLoopback && webhooks.CheckURL(rawURL, true) == nil {
		msg += "; for development, --allow-http-loopback allows http on a loopback host"
	}
	return &cli.UsageError{Msg: msg}
}
