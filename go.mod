module github.com/visid/visid

go 1.26
