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
// the rest). -h returns flag.ErrHelp and prints nothing, for AnswerHelp; any other mistake is a
// *UsageError of one line, printed by nobody yet, that names an unknown flag's closest match
// ("did you mean --accent-color?") and, for a FlagSet named "prog group sub", has Help
// "prog help group". The usage is not printed: it would scroll the message away. ParseFlags
// sets fs's output and usage function.
func ParseFlags(fs *flag.FlagSet, args []string, usage string, stderr io.Writer) error {
	fs.SetOutput(io.Discard) // the mistakes are reported once, by the caller's exit
	fs.Usage = func() {}     // AnswerHelp prints usage, to the right stream
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return &UsageError{Msg: flagMistake(fs, err, args), Help: helpOf(fs.Name())}
	}
	return err
}

// flagMistake is the one-line message of fs's parse error err: an unknown flag is named as
// args spelt it, with the closest flag of fs.
func flagMistake(fs *flag.FlagSet, err error, args []string) string {
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !unknown {
		return err.Error()
	}
	dashes := "-"
	for _, a := range args {
		if strings.HasPrefix(a, "--"+name) && (len(a) == len(name)+2 || a[len(name)+2] == '=') {
			dashes = "--"
			break
		}
	}
	msg := "unknown flag " + dashes + name
	if best := closestFlag(fs, name); best != "" {
		msg += "; did you mean " + dashes + best + "?"
	}
	return msg
}

// closestFlag is the flag of fs most like name: one whose name contains name (or is contained
// in it), else the nearest by edit distance within a third of the name's length; "" for none.
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestDist := "", len(name)/3+1
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(name, f.Name)
		if strings.Contains(f.Name, name) || strings.Contains(name, f.Name) {
			d = 0
		}
		if d < bestDist || d == bestDist && best != "" && d == 0 && len(f.Name) < len(best) {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// helpOf is the help command for a FlagSet named name: "prog help group" for "prog group …",
// "" (the program's own) for "prog".
func helpOf(name string) string {
	words := strings.Fields(name)
	if len(words) < 2 {
		return ""
	}
	return words[0] + " help " + words[1]
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
