package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
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

// CommandFirst returns args with the command's words moved to the front, so that flags may
// come before a command as well as after it: "-db memory tenant list" is "tenant list -db
// memory". isWord reports whether arg is the next word of the command, given the words found so
// far (none at first): "tenant", then "list". The search skips flags and their values and stops
// at the first argument that is neither a flag, a flag's value nor a word, and at "--"; the
// other arguments keep their order.
//
// A flag without "=" takes the next argument as its value unless that is a flag or a word, so
// a boolean flag may stand before a command word ("-v tenant list") and a word is never taken
// for a flag's value.
func CommandFirst(args []string, isWord func(words []string, arg string) bool) []string {
	var words, rest []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			return slices.Concat(words, rest, args[i:])
		case len(arg) > 1 && arg[0] == '-':
			rest = append(rest, arg)
			if !strings.Contains(arg, "=") && i+1 < len(args) {
				if next := args[i+1]; !strings.HasPrefix(next, "-") && !isWord(words, next) {
					rest = append(rest, next) // the flag's value
					i++
				}
			}
		case isWord(words, arg):
			words = append(words, arg)
		default:
			return slices.Concat(words, rest, args[i:])
		}
	}
	return slices.Concat(words, rest)
}
