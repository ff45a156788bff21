package filter_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// BenchmarkParse is the baseline the hostile cases are measured against: a typical filter.
func BenchmarkParse(b *testing.B) {
	rt := schema.User()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := filter.Parse(`userName eq "bjensen"`, rt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseHostile measures how fast filters built to cost a server are rejected.
func BenchmarkParseHostile(b *testing.B) {
	junk := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	var nodes strings.Builder
	for nodes.Len()+len(" or title pr") <= 4096 {
		if nodes.Len() > 0 {
			nodes.WriteString(" or ")
		}
		nodes.WriteString("title pr")
	}
	tests := []struct {
		name  string
		in    string
		limit bool // rejected for a Limits bound
	}{
		{"tooLong", `userName eq "` + strings.Repeat("x", 1<<20-14) + `"`, true},
		{"tooDeep", strings.Repeat("(", 4096), true},
		{"tooManyNodes", nodes.String(), true},
		{"junk", string(junk), false},
	}
	rt := schema.User()
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			_, err := filter.Parse(tt.in, rt)
			var fe *filter.Error
			if !errors.As(err, &fe) || errors.Is(err, filter.ErrLimit) != tt.limit {
				b.Fatalf("Parse of %d bytes: %v", len(tt.in), err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_, _ = filter.Parse(tt.in, rt)
			}
		})
	}
}

func BenchmarkMatch(b *testing.B) {
	user, widgetType := testUser(), widgets()
	// A long upper-case value and a long literal that almost matches at every offset: the
	// worst case for a naive case-insensitive substring search.
	long := widget{"label": filter.StringValue(strings.Repeat("A", 64<<10))}
	for _, tt := range []struct {
		name, filter string
		rt           *schema.ResourceType
		res          filter.Resource
		want         bool
	}{
		{"eq", `userName eq "bjensen"`, schema.User(), user, true},
		{"fold", `name.givenName eq "érin"`, schema.User(), user, true},
		{"valuePath", `emails[type eq "work" and value co "example.com"]`, schema.User(), user, true},
		{"dateTime", `meta.lastModified gt "2011-05-13T04:42:34+02:00"`, schema.User(), user, true},
		{"coLong", `label co "` + strings.Repeat("a", 4000) + `b"`, widgetType, long, false},
	} {
		e, err := filter.Parse(tt.filter, tt.rt)
		if err != nil {
			b.Fatal(err)
		}
		if filter.Match(e, tt.res) != tt.want {
			b.Fatalf("%.60s: Match is not %v", tt.filter, tt.want)
		}
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				filter.Match(e, tt.res)
			}
		})
	}
}
