package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpNamesEveryServiceFlag: every flag the service defines (each fs.String, fs.Bool,
// fs.Func… call of serve.go) is described in "idp help", so no flag works unseen.
func TestHelpNamesEveryServiceFlag(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "serve.go", nil, 0)
	require.NoError(t, err)
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "fs" || sel.Sel.Name == "Parse" {
			return true
		}
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			name, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			names = append(names, name)
		}
		return true
	})
	require.GreaterOrEqual(t, len(names), 10, "serve.go's flags were found")
	for _, name := range names {
		assert.True(t, strings.Contains(usage, "\n  -"+name+" ") || strings.Contains(usage, "\n  -"+name+"\n"),
			"idp help does not describe -%s", name)
	}
}
