package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// RunInterruptible runs a program's body with the command line's arguments (without the
// program's name) and the standard streams, under a context that the first SIGINT or SIGTERM
// cancels, and returns its error. After the first signal, a second one stops the program at
// once, as by default.
func RunInterruptible(run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	return run(ctx, os.Args[1:], os.Stdout, os.Stderr)
}
