package picture

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Width and Height are the canonical coordinate space every image is scaled to.
const (
	Width  = 1000
	Height = 750
)

// Click counts and the tolerance r (in canonical units, per axis).
const (
	DefaultPoints    = 5
	MinPoints        = 4
	MaxPoints        = 8
	DefaultTolerance = 20
	MinTolerance     = 5
	MaxTolerance     = 60
)

// maxDigits is how long a coordinate may be: Width and Height have four digits.
const maxDigits = 4

// Point is a click in the canonical coordinate space: 0 <= X < Width, 0 <= Y < Height.
type Point struct{ X, Y int }

// The errors of ParsePoints say what is wrong with the input, never what it contains: they may
// be logged, and click points must not be.
var (
	errPointForm  = errors.New("picture: a point is not of the form x,y")
	errCoordinate = errors.New("picture: a coordinate is not an unsigned decimal integer of at most four digits")
	errRange      = errors.New("picture: a coordinate is out of range")
)

// ParsePoints parses the form field "x1,y1;x2,y2;…": exactly n points, each coordinate an
// unsigned decimal integer (digits only, at most 4 digits, no spaces, no sign), with
// 0 <= X < Width and 0 <= Y < Height. Errors describe the problem ("want 5 points, got 3", "a
// coordinate is out of range") and never contain any part of the input.
func ParsePoints(s string, n int) ([]Point, error) {
	if n < 1 {
		return nil, errors.New("picture: want at least one point")
	}
	got := 0
	if s != "" {
		got = strings.Count(s, ";") + 1
	}
	if got != n {
		return nil, fmt.Errorf("picture: want %d points, got %d", n, got)
	}
	ps := make([]Point, 0, n)
	for p := range strings.SplitSeq(s, ";") {
		xs, ys, ok := strings.Cut(p, ",")
		if !ok || strings.Contains(ys, ",") {
			return nil, errPointForm
		}
		x, err := parseCoordinate(xs, Width)
		if err != nil {
			return nil, err
		}
		y, err := parseCoordinate(ys, Height)
		if err != nil {
			return nil, err
		}
		ps = append(ps, Point{X: x, Y: y})
	}
	return ps, nil
}

// parseCoordinate parses 1 to maxDigits ASCII digits as a value in [0, limit).
func parseCoordinate(s string, limit int) (int, error) {
	if len(s) == 0 || len(s) > maxDigits {
		return 0, errCoordinate
	}
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, errCoordinate
		}
		v = v*10 + int(c-'0')
	}
	if v >= limit {
		return 0, errRange
	}
	return v, nil
}

// FormatPoints is the inverse of ParsePoints: "x1,y1;x2,y2".
func FormatPoints(ps []Point) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(strconv.Itoa(p.X))
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(p.Y))
	}
	return b.String()
}

// inRange reports whether p lies in the canonical coordinate space.
func inRange(p Point) bool {
	return p.X >= 0 && p.X < Width && p.Y >= 0 && p.Y < Height
}

// Centered discretization (Chiasson, Srinivasan, Biddle and van Oorschot, "Centered
// Discretization with Application to Graphical Passwords", 2008). On each axis the line is cut
// into cells of width 2r+1, shifted per point so that the enrolled value sits in the middle of
// its cell: the offset d = (v−r) mod (2r+1) is kept in the clear, the cell index
// floor((v−d)/(2r+1)) is hashed. A later click w is in the same cell exactly when |w−v| <= r.
// The offset alone says nothing about the cell; it narrows v to one value per cell.
//
// Near the left and top edges a cell index is −1 (for example v = 0 has d = r+1 when r > 0, and
// its cell is [−r, r]), so cell indices are signed.

// offset is (v − r) mod (2r+1), always in [0, 2r].
func offset(v, r int) int {
	m := 2*r + 1
	d := (v - r) % m
	if d < 0 {
		d += m
	}
	return d
}

// cell is floor((v − d) / (2r+1)), rounding towards minus infinity.
func cell(v, d, r int) int {
	m := 2*r + 1
	n := v - d
	q := n / m
	if n%m != 0 && n < 0 {
		q--
	}
	return q
}

// discretize returns the offsets and cell indices of enrolled points, x then y per point:
// offsets[2i] is the offset of ps[i].X, offsets[2i+1] that of ps[i].Y, and cells likewise.
func discretize(ps []Point, r int) (offsets, cells []int) {
	offsets = make([]int, 0, 2*len(ps))
	cells = make([]int, 0, 2*len(ps))
	for _, p := range ps {
		dx, dy := offset(p.X, r), offset(p.Y, r)
		offsets = append(offsets, dx, dy)
		cells = append(cells, cell(p.X, dx, r), cell(p.Y, dy, r))
	}
	return offsets, cells
}

// cellsAt returns the cell indices of the clicks ps under the stored offsets, in the order of
// discretize. It returns nil if len(offsets) is not 2 × len(ps).
func cellsAt(ps []Point, offsets []int, r int) []int {
	if len(offsets) != 2*len(ps) {
		return nil
	}
	cells := make([]int, 0, len(offsets))
	for i, p := range ps {
		cells = append(cells, cell(p.X, offsets[2*i], r), cell(p.Y, offsets[2*i+1], r))
	}
	return cells
}

// tooClose reports whether b falls in the same cell as a, or in a cell next to it, on both
// axes of a's grid: |a.X−b.X| <= 3r+1 and |a.Y−b.Y| <= 3r+1. Enrollment refuses such pairs, so
// that no two points of a password can be confused with each other.
func tooClose(a, b Point, r int) bool {
	limit := 3*r + 1
	return abs(a.X-b.X) <= limit && abs(a.Y-b.Y) <= limit
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
