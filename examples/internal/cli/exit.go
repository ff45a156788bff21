// Package cli is the command-line plumbing the example programs share: running under
// SIGINT/SIGTERM, exit statuses, usage errors, flag parsing and -log-level.
package cli

import (
	"errors"
	"fmt"
	"io"
)

// UsageError is a mistake on the command line: the program exits with status 2.
type UsageError struct {
	// Msg says what is wrong.
	Msg string
	// Printed reports whether the message and the usage have already been written to stderr.
	Printed bool
	// Help is the command that prints the usage of what was mistaken ("idp help tenant");
	// "": the program's own.
	Help string
}

// Error returns the message.
func (e *UsageError) Error() string { return e.Msg }

// ExitCode reports err on stderr, unless already reported, and returns the exit status for it:
// 0 for nil, 2 for a *UsageError, 1 for anything else. name begins the message ("idp: …"), and
// a usage error's ends with a hint to run helpCommand ("Run \"idp help\" for usage.").
func ExitCode(err error, stderr io.Writer, name, helpCommand string) int {
	if err == nil {
		return 0
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		if !ue.Printed {
			if ue.Help != "" {
				helpCommand = ue.Help
			}
			fmt.Fprintf(stderr, "%s: %v\nRun \"%s\" for usage.\n", name, err, helpCommand)
		}
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return 1
}
