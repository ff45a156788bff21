package cli_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
)

const usage = "Usage:\n  prog [flags]\n"

func newFlagSet() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	return fs, fs.String("name", "", "")
}

func TestParseFlagsStopsAtPositional(t *testing.T) {
	fs, name := newFlagSet()
	var stderr bytes.Buffer
	require.NoError(t, cli.ParseFlags(fs, []string{"-name", "a", "extra", "-name", "b"}, usage, &stderr))
	assert.Equal(t, "a", *name)
	assert.Equal(t, []string{"extra", "-name", "b"}, fs.Args())
	assert.Empty(t, stderr.String())
}

// TestParseInterspersed: flags may follow positional arguments, until "--".
func TestParseInterspersed(t *testing.T) {
	for args, want := range map[string]string{ // -name and the positional arguments
		"":                     ` []`,
		"acme":                 ` [acme]`,
		"acme -name x globex":  `x [acme globex]`,
		"--name=y acme globex": `y [acme globex]`,
		"acme -- -name z":      ` [acme -name z]`,
		"-- -name":             ` [-name]`,
	} {
		fs, name := newFlagSet()
		var stderr bytes.Buffer
		pos, err := cli.ParseInterspersed(fs, strings.Fields(args), usage, &stderr)
		require.NoError(t, err, "%q", args)
		assert.Equal(t, want, fmt.Sprintf("%s %v", *name, pos), "%q", args)
		assert.Empty(t, stderr.String())
	}
}

// TestParseMistakes: a mistake is a usage error, printed once to stderr with the usage.
func TestParseMistakes(t *testing.T) {
	parsers := map[string]func(fs *flag.FlagSet, args []string, stderr *bytes.Buffer) error{
		"ParseFlags": func(fs *flag.FlagSet, args []string, stderr *bytes.Buffer) error {
			return cli.ParseFlags(fs, args, usage, stderr)
		},
		"ParseInterspersed": func(fs *flag.FlagSet, args []string, stderr *bytes.Buffer) error {
			_, err := cli.ParseInterspersed(fs, args, usage, stderr)
			return err
		},
	}
	for name, parse := range parsers {
		t.Run(name, func(t *testing.T) {
			for _, args := range [][]string{{"-port", "80"}, {"-name"}} {
				fs, _ := newFlagSet()
				var stderr bytes.Buffer
				err := parse(fs, args, &stderr)
				var ue *cli.UsageError
				require.ErrorAs(t, err, &ue, "%q", args)
				assert.False(t, ue.Printed)
				assert.Empty(t, stderr.String(), "reported once, by ExitCode")

				var exit bytes.Buffer
				assert.Equal(t, 2, cli.ExitCode(err, &exit, "prog", "prog -h"))
				assert.Equal(t, "prog: "+err.Error()+"\nRun \"prog -h\" for usage.\n", exit.String(), "one line and the help to run, never the usage")
			}
		})
	}
}

// TestHelp: -h is flag.ErrHelp, printed by nobody until AnswerHelp prints the usage to stdout.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--h", "--help"} {
		assert.True(t, cli.IsHelp(arg), arg)

		fs, _ := newFlagSet()
		var stdout, stderr bytes.Buffer
		err := cli.ParseFlags(fs, []string{arg}, usage, &stderr)
		require.ErrorIs(t, err, flag.ErrHelp)
		_, err2 := cli.ParseInterspersed(fs, []string{"acme", arg}, usage, &stderr)
		require.ErrorIs(t, err2, flag.ErrHelp)
		assert.Empty(t, stderr.String())

		assert.NoError(t, cli.AnswerHelp(err, usage, &stdout))
		assert.Equal(t, usage, stdout.String())
	}
	for _, arg := range []string{"-", "--", "help", "-x", "-hh", ""} {
		assert.False(t, cli.IsHelp(arg), arg)
	}
}

func TestAnswerHelpPassesOtherErrors(t *testing.T) {
	var stdout bytes.Buffer
	assert.NoError(t, cli.AnswerHelp(nil, usage, &stdout))
	other := errors.New("listen tcp: address in use")
	assert.Same(t, other, cli.AnswerHelp(other, usage, &stdout))
	assert.Empty(t, stdout.String())
}

func TestCommandFirst(t *testing.T) {
	subs := map[string][]string{"tenant": {"create", "list"}, "events": nil}
	isWord := func(words []string, arg string) bool {
		switch len(words) {
		case 0:
			_, ok := subs[arg]
			return ok
		case 1:
			return slices.Contains(subs[words[0]], arg)
		}
		return false
	}
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"-db memory", "-db memory"},
		{"-db memory tenant list", "tenant list -db memory"},
		{"-db=memory tenant list", "tenant list -db=memory"},
		{"tenant -db memory list", "tenant list -db memory"},
		{"tenant list -db memory", "tenant list -db memory"},
		{"-v tenant list", "tenant list -v"},
		{"-v -db memory tenant create acme --name Acme", "tenant create -v -db memory acme --name Acme"},
		{"-db memory events --tenant acme --follow", "events -db memory --tenant acme --follow"},
		{"tenant create -- list", "tenant create -- list"},
		{"-addr 127.0.0.1:0 extra", "-addr 127.0.0.1:0 extra"},
		{"-db memory frobnicate tenant", "-db memory frobnicate tenant"},
	} {
		got := cli.CommandFirst(strings.Fields(tt.in), isWord)
		assert.Equal(t, tt.want, strings.Join(got, " "), "%q", tt.in)
	}
}

// TestUnknownFlagSuggests: an unknown flag is named as it was spelt, with the closest flag, and
// the help of the command's group.
func TestUnknownFlagSuggests(t *testing.T) {
	fs := flag.NewFlagSet("idp tenant set", flag.ContinueOnError)
	fs.String("accent-color", "", "")
	fs.String("logo", "", "")
	fs.String("tenant", "", "")
	var stderr bytes.Buffer
	err := cli.ParseFlags(fs, []string{"--color", "#123456"}, usage, &stderr)
	var ue *cli.UsageError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "unknown flag --color; did you mean --accent-color?", ue.Msg)
	assert.Equal(t, "idp help tenant", ue.Help)
	err = cli.ParseFlags(fs, []string{"-tennant", "acme"}, usage, &stderr)
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "unknown flag -tennant; did you mean -tenant?", ue.Msg)
	err = cli.ParseFlags(fs, []string{"-zzzzzz"}, usage, &stderr)
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "unknown flag -zzzzzz", ue.Msg, "nothing close")
}
