package picture

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePoints(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want []Point
	}{
		{"five", "12,34;567,89;999,749;0,0;1,2", 5, []Point{{12, 34}, {567, 89}, {999, 749}, {0, 0}, {1, 2}}},
		{"four", "100,200;300,400;500,600;700,100", 4, []Point{{100, 200}, {300, 400}, {500, 600}, {700, 100}}},
		{"one", "5,6", 1, []Point{{5, 6}}},
		{"leading zeros", "0012,0749", 1, []Point{{12, 749}}},
		{"largest", "999,749", 1, []Point{{Width - 1, Height - 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePoints(tt.in, tt.n)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParsePointsErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		n       int
		wantErr string // a substring of the error
	}{
		{"empty", "", 5, "want 5 points, got 0"},
		{"too few", "123,456;234,567;345,678", 5, "want 5 points, got 3"},
		{"too many", "123,456;234,567;345,678", 2, "want 2 points, got 3"},
		{"trailing semicolon", "123,456;234,567;", 2, "want 2 points, got 3"},
		{"trailing semicolon, count matches", "123,456;", 2, "not of the form"},
		{"leading semicolon", ";123,456", 2, "not of the form"},
		{"empty point", "123,456;;234,567", 3, "not of the form"},
		{"no comma", "123456", 1, "not of the form"},
		{"two commas", "123,456,789", 1, "not of the form"},
		{"empty x", ",456", 1, "unsigned decimal"},
		{"empty y", "123,", 1, "unsigned decimal"},
		{"space before", " 123,456", 1, "unsigned decimal"},
		{"space after comma", "123, 456", 1, "unsigned decimal"},
		{"space after", "123,456 ", 1, "unsigned decimal"},
		{"space around semicolon", "123,456 ; 234,567", 2, "unsigned decimal"},
		{"plus", "+123,456", 1, "unsigned decimal"},
		{"minus", "-123,456", 1, "unsigned decimal"},
		{"x minus one", "-1,456", 1, "unsigned decimal"},
		{"y minus one", "123,-1", 1, "unsigned decimal"},
		{"five digits", "12345,456", 1, "unsigned decimal"},
		{"five digits, leading zeros", "00123,456", 1, "unsigned decimal"},
		{"hex", "0x12,456", 1, "unsigned decimal"},
		{"decimal point", "12.5,456", 1, "unsigned decimal"},
		{"non-ASCII digit", "١٢٣,456", 1, "unsigned decimal"},
		{"newline", "123,456\n", 1, "unsigned decimal"},
		{"x at Width", "1000,456", 1, "out of range"},
		{"y at Height", "123,750", 1, "out of range"},
		{"x far out", "9999,456", 1, "out of range"},
		{"y far out", "123,9999", 1, "out of range"},
		{"no points wanted", "", 0, "at least one point"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePoints(tt.in, tt.n)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.Contains(t, err.Error(), tt.wantErr)
			if tt.in != "" {
				assert.NotContains(t, err.Error(), tt.in, "the error repeats the input")
			}

			// The only numbers an error may hold are the counts; no coordinate of the input.
			msg := err.Error()
			msg = strings.Replace(msg, fmt.Sprintf("want %d points", tt.n), "", 1)
			msg = regexp.MustCompile(`got \d+$`).ReplaceAllString(msg, "")
			assert.NotRegexp(t, `\d`, msg, "the error holds a number that is not a count")
		})
	}
}

func TestFormatPointsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		n := 1 + rng.IntN(MaxPoints)
		ps := make([]Point, n)
		for i := range ps {
			ps[i] = Point{X: rng.IntN(Width), Y: rng.IntN(Height)}
		}
		s := FormatPoints(ps)
		got, err := ParsePoints(s, n)
		require.NoError(t, err)
		require.Equal(t, ps, got)
		require.Equal(t, s, FormatPoints(got))
	}
	assert.Equal(t, "0,0;999,749", FormatPoints([]Point{{0, 0}, {999, 749}}))
	assert.Equal(t, "", FormatPoints(nil))
}

func TestOffsetAndCell(t *testing.T) {
	tests := []struct {
		v, r, wantOffset, wantCell int
	}{
		{0, 20, 21, -1},   // cell [-20, 20]
		{20, 20, 0, 0},    // cell [0, 40]
		{21, 20, 1, 0},    // cell [1, 41]
		{40, 20, 20, 0},   // cell [20, 60]
		{41, 20, 21, 0},   // cell [21, 61]
		{61, 20, 0, 1},    // cell [41, 81]
		{999, 20, 36, 23}, // cell [979, 1019]
		{0, 5, 6, -1},
		{5, 5, 0, 0},
		{0, 60, 61, -1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("v=%d r=%d", tt.v, tt.r), func(t *testing.T) {
			d := offset(tt.v, tt.r)
			assert.Equal(t, tt.wantOffset, d)
			assert.Equal(t, tt.wantCell, cell(tt.v, d, tt.r))
		})
	}
	// Floor division, not truncation, for negative v − d.
	assert.Equal(t, -1, cell(0, 1, 5))
	assert.Equal(t, -1, cell(0, 11, 5))
	assert.Equal(t, -2, cell(0, 12, 5))
	assert.Equal(t, 0, cell(10, 0, 5))
	assert.Equal(t, 1, cell(11, 0, 5))
}

// sameCell reports whether the click w is in the cell of the enrolled value v.
func sameCell(v, w, r int) bool {
	d := offset(v, r)
	return cell(v, d, r) == cell(w, d, r)
}

func TestDiscretizationBoundaries(t *testing.T) {
	for _, r := range []int{MinTolerance, DefaultTolerance, MaxTolerance} {
		axes := []struct {
			name   string
			limit  int
			values []int
		}{
			{"x", Width, []int{0, 1, r, r + 1, 500, Width - 1}},
			{"y", Height, []int{0, 1, r, r + 1, 500, Height - 1}},
		}
		for _, axis := range axes {
			for _, v := range axis.values {
				t.Run(fmt.Sprintf("r=%d %s=%d", r, axis.name, v), func(t *testing.T) {
					for _, sign := range []int{-1, 1} {
						if w := v + sign*r; w >= 0 && w < axis.limit {
							assert.True(t, sameCell(v, w, r), "a click %+d away is in another cell", sign*r)
						}
						if w := v + sign*(r+1); w >= 0 && w < axis.limit {
							assert.False(t, sameCell(v, w, r), "a click %+d away is in the same cell", sign*(r+1))
						}
					}
				})
			}
		}
	}
}

func TestDiscretizePoints(t *testing.T) {
	const r = DefaultTolerance
	enrolled := []Point{{0, 0}, {999, 749}, {r, r + 1}, {500, 374}}
	offsets, cells := discretize(enrolled, r)
	require.Len(t, offsets, 2*len(enrolled))
	require.Len(t, cells, 2*len(enrolled))
	for i, p := range enrolled {
		assert.Equal(t, offset(p.X, r), offsets[2*i])
		assert.Equal(t, offset(p.Y, r), offsets[2*i+1])
	}
	assert.Equal(t, cells, cellsAt(enrolled, offsets, r))

	tests := []struct {
		name  string
		shift func(i int, p Point) Point
		same  bool
	}{
		{"exact", func(_ int, p Point) Point { return p }, true},
		{"r towards the middle on both axes", func(_ int, p Point) Point {
			return Point{X: p.X + towardsMiddle(p.X, Width)*r, Y: p.Y + towardsMiddle(p.Y, Height)*r}
		}, true},
		{"r+1 on x for one point", func(i int, p Point) Point {
			if i == 3 {
				p.X += r + 1
			}
			return p
		}, false},
		{"r+1 on y for the corner point", func(i int, p Point) Point {
			if i == 1 {
				p.Y -= r + 1
			}
			return p
		}, false},
		{"r+1 on y down to the edge", func(i int, p Point) Point {
			if i == 2 {
				p.Y -= r + 1 // r+1 − (r+1) = 0
			}
			return p
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clicks := make([]Point, len(enrolled))
			for i, p := range enrolled {
				clicks[i] = tt.shift(i, p)
				require.True(t, inRange(clicks[i]))
			}
			assert.Equal(t, tt.same, slices.Equal(cells, cellsAt(clicks, offsets, r)))
		})
	}

	assert.Nil(t, cellsAt(enrolled[:3], offsets, r), "offsets of 4 points for 3 clicks")
	assert.Nil(t, cellsAt(enrolled, offsets[:7], r))
}

// towardsMiddle is the direction from v towards the middle of [0, limit).
func towardsMiddle(v, limit int) int {
	if v < limit/2 {
		return 1
	}
	return -1
}

// Same cell ⇔ within r, for random enrolled values and clicks anywhere on the axis.
func TestDiscretizationProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(2008, 0xc0ffee))
	for _, r := range []int{MinTolerance, DefaultTolerance, MaxTolerance} {
		t.Run(fmt.Sprintf("r=%d", r), func(t *testing.T) {
			for range 10_000 {
				limit := Width
				if rng.IntN(2) == 0 {
					limit = Height
				}
				v := rng.IntN(limit)
				var w int
				if rng.IntN(2) == 0 {
					w = rng.IntN(limit) // anywhere
				} else {
					w = min(max(v+rng.IntN(4*r+3)-(2*r+1), 0), limit-1) // near v
				}
				if sameCell(v, w, r) != (abs(v-w) <= r) {
					t.Fatalf("r=%d v=%d w=%d: same cell %v, |v−w| = %d", r, v, w, sameCell(v, w, r), abs(v-w))
				}
			}
		})
	}
}

func TestTooClose(t *testing.T) {
	for _, r := range []int{MinTolerance, DefaultTolerance, MaxTolerance} {
		a := Point{X: 500, Y: 374}
		near, far := 3*r+1, 3*r+2
		tests := []struct {
			name string
			b    Point
			want bool
		}{
			{"same point", a, true},
			{"3r+1 on both axes", Point{a.X + near, a.Y - near}, true},
			{"3r+1 on x", Point{a.X - near, a.Y}, true},
			{"3r+2 on x", Point{a.X + far, a.Y}, false},
			{"3r+2 on x, minus", Point{a.X - far, a.Y + near}, false},
			{"3r+2 on y", Point{a.X, a.Y - far}, false},
			{"3r+2 on y, plus", Point{a.X - near, a.Y + far}, false},
			{"far on both axes", Point{a.X + far, a.Y + far}, false},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("r=%d %s", r, tt.name), func(t *testing.T) {
				assert.Equal(t, tt.want, tooClose(a, tt.b, r))
				assert.Equal(t, tt.want, tooClose(tt.b, a, r), "not symmetric")
			})
		}
	}
}

// tooClose is exactly "in the same or an adjacent cell of a's grid on both axes".
func TestTooCloseIsAdjacentCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10_000 {
		r := MinTolerance + rng.IntN(MaxTolerance-MinTolerance+1)
		a := Point{X: rng.IntN(Width), Y: rng.IntN(Height)}
		b := Point{X: a.X + rng.IntN(8*r+1) - 4*r, Y: a.Y + rng.IntN(8*r+1) - 4*r}
		offsets, cells := discretize([]Point{a}, r)
		bc := cellsAt([]Point{b}, offsets, r)
		adjacent := abs(cells[0]-bc[0]) <= 1 && abs(cells[1]-bc[1]) <= 1
		if adjacent != tooClose(a, b, r) {
			t.Fatalf("r=%d a=%v b=%v: adjacent %v, tooClose %v", r, a, b, adjacent, tooClose(a, b, r))
		}
	}
}
