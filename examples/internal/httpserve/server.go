// Package httpserve serves the example programs' HTTP handlers: an http.Server with timeouts, a
// graceful shutdown when the program is told to stop, and an access log.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// The http.Server's timeouts.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 2 * time.Minute
)

// WriteTimeout is how long the server gives a request, from the end of its headers, to be
// answered; a handler's own deadlines must be shorter, so that their answers are still written.
const WriteTimeout = 60 * time.Second

// ShutdownTimeout is how long a shutdown waits for the requests in flight.
const ShutdownTimeout = 10 * time.Second

// Server is an http.Server serving one listener, started by Start.
type Server struct {
	srv    *http.Server
	served chan error // what srv.Serve returned
	log    *slog.Logger
}

// Start serves handler on ln, in the background, until Wait shuts the server down. log takes
// the server's own errors, at Warn, and the shutdown's progress. The server closes ln.
func Start(ln net.Listener, handler http.Handler, log *slog.Logger) *Server {
	s := &Server{
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      WriteTimeout,
			IdleTimeout:       idleTimeout,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
		served: make(chan error, 1),
		log:    log,
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s
}

// Wait waits until ctx is done, then shuts the server down gracefully, waiting up to
// ShutdownTimeout for the requests in flight, and returns nil. It returns an error when the
// server fails before, or when requests are still in flight at the timeout (it then closes
// their connections). It is WaitAll of the one server.
func (s *Server) Wait(ctx context.Context) error {
	return WaitAll(ctx, s.log, s)
}

// WaitAll is Wait for several servers of one program: it waits until ctx is done or one of them
// fails, then shuts every other down at once, and returns what failed (nil after a graceful
// shutdown). log takes the shutdown's progress once for all: "shutting down" when ctx is done,
// and "stopped" when every server has stopped gracefully.
func WaitAll(ctx context.Context, log *slog.Logger, servers ...*Server) error {
	type result struct {
		i   int
		err error
	}
	results := make(chan result, len(servers))
	for i, s := range servers {
		go func() { results <- result{i, <-s.served} }()
	}
	done := make([]bool, len(servers))
	var errs []error
	select {
	case r := <-results:
		done[r.i] = true
		errs = append(errs, r.err) // Serve returns only on failure before Shutdown
	case <-ctx.Done():
		log.Info("shutting down", "timeout", ShutdownTimeout)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	shutdown := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		if !done[i] {
			wg.Go(func() {
				if err := s.srv.Shutdown(sctx); err != nil {
					_ = s.srv.Close()
					shutdown[i] = fmt.Errorf("shutting down: %w", err)
				}
			})
		}
	}
	wg.Wait()
	for range len(servers) - len(errs) {
		r := <-results
		if shutdown[r.i] != nil {
			errs = append(errs, shutdown[r.i])
		} else if !errors.Is(r.err, http.ErrServerClosed) {
			errs = append(errs, r.err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
