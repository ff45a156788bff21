package storetest_test

import (
	"go/parser"
	"go/token"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store/storetest"
)

// TestDocNamesEverySuite keeps the package doc true: every suite Run runs is named in it.
func TestDocNamesEverySuite(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	doc := f.Doc.Text()
	for _, s := range storetest.Suites() {
		assert.Regexp(t, regexp.MustCompile(`\b`+s.Name+`\b`), doc, "the package doc names the %s suite", s.Name)
	}
}
