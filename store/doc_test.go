package store_test

import (
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// TestDocNamesEveryInterface keeps the package doc true: every interface a Backend holds is named
// in it.
func TestDocNamesEveryInterface(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	doc := f.Doc.Text()
	bt := reflect.TypeFor[store.Backend]()
	require.Equal(t, 14, bt.NumField(), "a new store: name it in doc.go and in the count there")
	for i := range bt.NumField() {
		name := bt.Field(i).Type.Name()
		assert.Regexp(t, regexp.MustCompile(`\b`+name+`\b`), doc, "the package doc names store.%s", name)
	}
}
