package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// ParseFlags parses args with fs, which stops at the first positional argument (fs.Args are
// the rest). -h returns flag.ErrHelp and prints nothing, for AnswerHelp; any other mistake
// prints the message and usage to stderr and returns a *UsageError that says it is printed.
// ParseFlags sets fs's output and usage function.
func ParseFlags(fs *flag.FlagSet, args []string, usage string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	fs.Usage = func() {} // AnswerHelp and the mistakes print usage once, to the right stream
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "\n%s", usage)
		return &UsageError{Msg: err.Error(), Printed: true}
	}
	return err
}

// ParseInterspersed is ParseFlags allowing flags after positional arguments ("create acme
// --name Acme"): it returns the positional arguments. Everything after "--" is positional.
func ParseInterspersed(fs *flag.FlagSet, args []string, usage string, stderr io.Writer) ([]string, error) {
	var positional []string
	for {
		if err := ParseFlags(fs, args, usage, stderr); err != nil {
			return nil, err
		}
		consumed := args[:len(args)-fs.NArg()]
		args = fs.Args()
		// Parse stops at the first positional argument, or after a "--", which it consumes.
		if len(args) == 0 || len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			return append(positional, args...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// AnswerHelp answers the flag.ErrHelp of -h: it prints usage to stdout and returns nil. It
// returns any other err as it is.
func AnswerHelp(err error, usage string, stdout io.Writer) error {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return nil
	}
	return err
}

// IsHelp reports whether arg asks for help as the flag package understands it: -h, -help,
// --h or --help.
func IsHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "--h"
}
