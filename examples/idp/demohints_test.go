package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/picture"
)

// svgShape is one drawn element of a group of the demo picture.
type svgShape struct {
	kind  string
	attrs map[string]string
}

func (s svgShape) num(t *testing.T, name string) float64 {
	v, err := strconv.ParseFloat(s.attrs[name], 64)
	require.NoError(t, err, "%s of %s", name, s.kind)
	return v
}

// svgGroups reads the demo picture's groups by the comment that precedes each: the comment's
// text, and the shapes of the group.
func svgGroups(t *testing.T, data []byte) map[string][][]svgShape {
	groups := map[string][][]svgShape{}
	dec := xml.NewDecoder(bytes.NewReader(data))
	comment, depth := "", 0
	var shapes []svgShape
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.Comment:
			comment = strings.TrimSpace(string(tok))
		case xml.StartElement:
			if tok.Name.Local == "g" && depth == 0 && comment != "" {
				depth, shapes = 1, nil
				continue
			}
			if depth > 0 {
				depth++
				a := map[string]string{}
				for _, at := range tok.Attr {
					a[at.Name.Local] = at.Value
				}
				shapes = append(shapes, svgShape{kind: tok.Name.Local, attrs: a})
			}
		case xml.EndElement:
			if depth > 0 {
				depth--
				if depth == 0 {
					groups[comment] = append(groups[comment], shapes)
					comment = ""
				}
			}
		}
	}
	return groups
}

// TestDemoHints checks each words of the demo's hint against the drawing: each names an object
// drawn once, and the demo point lies on the named part of it.
func TestDemoHints(t *testing.T) {
	var data []byte
	for _, im := range picture.BuiltinImages() {
		if im.Name == demoImage {
			data = im.Data
		}
	}
	require.NotEmpty(t, data)
	groups := svgGroups(t, data)
	hints := strings.Split(demoPointsHint, "; ")
	require.Len(t, hints, len(demoPoints))

	for i, tt := range []struct {
		hint  string
		group string // the comment before the object's group
		kind  string // the element the point lies on
		fill  string // its fill, or "" for a stroked line
	}{
		{"the middle of the sun", "Sun", "circle", "#ffd23f"},
		{"the yellow lamp room at the top of the lighthouse", "Lighthouse with red and white stripes", "rect", "#ffe066"},
		{"the white band on the tall red buoy (the one with a yellow ball on top)", "Red buoy", "rect", "#ffffff"},
		{"the jumping orange fish (right)", "Jumping orange fish", "ellipse", "#f77f00"},
		{"the crossbar of the anchor (bottom left)", "Anchor", "line", ""},
	} {
		t.Run(tt.hint, func(t *testing.T) {
			assert.Equal(t, tt.hint, hints[i], "the hint's words, in order")
			require.Len(t, groups[tt.group], 1, "the picture draws one %q", tt.group)
			p := demoPoints[i]
			x, y := float64(p.X), float64(p.Y)
			var on []svgShape
			for _, s := range groups[tt.group][0] {
				if s.kind == tt.kind && s.attrs["fill"] == tt.fill {
					on = append(on, s)
				}
			}
			require.NotEmpty(t, on, "the group has a %s filled %q", tt.kind, tt.fill)
			inside := false
			for _, s := range on {
				switch s.kind {
				case "circle":
					inside = inside || math.Hypot(x-s.num(t, "cx"), y-s.num(t, "cy")) <= s.num(t, "r")
				case "ellipse": // rotated about its centre, a point within the short radius is inside
					inside = inside || math.Hypot(x-s.num(t, "cx"), y-s.num(t, "cy")) <= math.Min(s.num(t, "rx"), s.num(t, "ry"))
				case "rect":
					inside = inside || x >= s.num(t, "x") && x <= s.num(t, "x")+s.num(t, "width") &&
						y >= s.num(t, "y") && y <= s.num(t, "y")+s.num(t, "height")
				case "line": // horizontal: within half the group's stroke width
					inside = inside || s.num(t, "y1") == s.num(t, "y2") && math.Abs(y-s.num(t, "y1")) <= 3.5 &&
						x >= s.num(t, "x1") && x <= s.num(t, "x2")
				}
			}
			assert.True(t, inside, "point %d (%d,%d) lies on %s", i+1, p.X, p.Y, tt.hint)
		})
	}
	// No other drawn object shares the name: one sun, one lighthouse, one tall red buoy (the
	// other buoys are green and striped), one fish, one anchor.
	for _, other := range []string{"Green buoy", "Striped buoy", "Red sailboat"} {
		assert.Len(t, groups[other], 1, "%s is there, and told apart by the hint's words", other)
	}
}
