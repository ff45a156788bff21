package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/language"
)

// The tenant's look: what CheckTenant accepts.
const (
	// MaxLogoSize is the largest logo a tenant may have, in bytes.
	MaxLogoSize = 256 << 10
	// MaxDisplayNameLength is the longest display name a tenant may have, in characters.
	MaxDisplayNameLength = 100

	// PageBackground and ButtonText are the colours an accent colour is checked against: the
	// background of visid's sign-in pages and the text of the buttons the accent colour fills.
	PageBackground = "#f4f6f8"
	ButtonText     = "#ffffff"
	// MinAccentContrast is the least contrast ratio an accent colour must have with
	// PageBackground and with ButtonText: WCAG 2's level AA for normal text.
	MinAccentContrast = 4.5
)

// The media types of the logos CheckLogo accepts.
const (
	LogoPNG  = "image/png"
	LogoJPEG = "image/jpeg"
	LogoWebP = "image/webp"
	LogoSVG  = "image/svg+xml"
)

// CheckTenant checks the tenant's display name and look, and puts them in their canonical
// form: LogoType and LogoHash from Logo (both zero without a logo), AccentColor in lower
// case, DefaultLanguage as a canonical BCP 47 tag. Stores call it on every write of a
// tenant. Its errors wrap ErrInvalid and say which value is wrong and why.
func CheckTenant(t *Tenant) error {
	if err := CheckDisplayName(t.DisplayName); err != nil {
		return err
	}
	t.LogoType, t.LogoHash = "", [32]byte{}
	if len(t.Logo) > 0 {
		typ, err := CheckLogo(t.Logo)
		if err != nil {
			return err
		}
		t.LogoType, t.LogoHash = typ, sha256.Sum256(t.Logo)
	} else {
		t.Logo = nil
	}
	c, err := CheckAccentColor(t.AccentColor)
	if err != nil {
		return err
	}
	t.AccentColor = c
	l, err := CheckLanguage(t.DefaultLanguage)
	if err != nil {
		return err
	}
	t.DefaultLanguage = l
	switch t.SecondFactor {
	case "", SecondFactorPicture:
		t.SecondFactor = ""
	case SecondFactorPictureOrPasskey:
	default:
		return fmt.Errorf("second factor policy %q is neither %q nor %q: %w", t.SecondFactor,
			SecondFactorPicture, SecondFactorPictureOrPasskey, ErrInvalid)
	}
	return nil
}

// CheckDisplayName returns nil when name can be a tenant's display name: at most
// MaxDisplayNameLength characters of valid UTF-8 without control characters. The error wraps
// ErrInvalid.
func CheckDisplayName(name string) error {
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("display name is not valid UTF-8: %w", ErrInvalid)
	case utf8.RuneCountInString(name) > MaxDisplayNameLength:
		return fmt.Errorf("display name has %d characters, at most %d are allowed: %w",
			utf8.RuneCountInString(name), MaxDisplayNameLength, ErrInvalid)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("display name contains a control character: %w", ErrInvalid)
	}
	return nil
}

// CheckLogo returns the media type of the logo image data (LogoPNG, LogoJPEG, LogoWebP or
// LogoSVG), found from its bytes, never from a file name. It refuses an empty image, one
// larger than MaxLogoSize, one of another format, a PNG or JPEG whose header does not decode,
// and an SVG that is not static drawing. An SVG is checked against an allowlist (checkSVG):
// its elements and attributes are those of static drawing, so scripts, event handlers,
// animation, foreign content, processing instructions, a DOCTYPE and entities are refused,
// and its links and CSS url()s may only name #fragments of the logo itself; a host that serves
// Tenant.Logo on its own may rely on that. The error wraps ErrInvalid and names the first
// thing refused, such as `logo: element "animate" is not allowed`.
func CheckLogo(data []byte) (string, error) {
	switch {
	case len(data) == 0:
		return "", fmt.Errorf("logo is empty: %w", ErrInvalid)
	case len(data) > MaxLogoSize:
		return "", fmt.Errorf("logo is %d bytes, at most %d (%d KiB) are allowed: %w",
			len(data), MaxLogoSize, MaxLogoSize>>10, ErrInvalid)
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		if _, err := png.DecodeConfig(bytes.NewReader(data)); err != nil {
			return "", fmt.Errorf("logo is not a valid PNG image (%v): %w", err, ErrInvalid)
		}
		return LogoPNG, nil
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		if _, err := jpeg.DecodeConfig(bytes.NewReader(data)); err != nil {
			return "", fmt.Errorf("logo is not a valid JPEG image (%v): %w", err, ErrInvalid)
		}
		return LogoJPEG, nil
	case len(data) >= 16 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		// The RIFF header's size counts the bytes after it; a chunk (VP8, VP8L, VP8X) follows.
		if size := binary.LittleEndian.Uint32(data[4:8]); int64(size)+8 != int64(len(data)) ||
			!strings.HasPrefix(string(data[12:16]), "VP8") {
			return "", fmt.Errorf("logo is not a valid WebP image: %w", ErrInvalid)
		}
		return LogoWebP, nil
	}
	if err := checkSVG(data); err != nil {
		return "", err
	}
	return LogoSVG, nil
}

// The namespaces an SVG logo may name.
const (
	svgNamespace   = "http://www.w3.org/2000/svg"
	xlinkNamespace = "http://www.w3.org/1999/xlink"
)

// svgElements are the elements an SVG logo may have: static drawing. Left out: script,
// handler, animation (animate, set, animateTransform, animateMotion, discard), links (a),
// pictures and documents from elsewhere (image, feImage, foreignObject, iframe, video,
// audio), fonts (font-face and its like), view, switch and cursor.
var svgElements = setOf(
	"svg", "g", "defs", "symbol", "use", "title", "desc", "metadata",
	"path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
	"text", "tspan", "textPath",
	"linearGradient", "radialGradient", "stop", "pattern", "clipPath", "mask", "marker", "style",
	"filter", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix",
	"feDiffuseLighting", "feDisplacementMap", "feDistantLight", "feDropShadow", "feFlood",
	"feFuncA", "feFuncB", "feFuncG", "feFuncR", "feGaussianBlur", "feMerge", "feMergeNode",
	"feMorphology", "feOffset", "fePointLight", "feSpecularLighting", "feSpotLight", "feTile",
	"feTurbulence",
)

// svgAttributes are the attributes without a namespace prefix an SVG logo may have, on any of
// svgElements: geometry, presentation, gradient, pattern, clip, mask, marker, text and filter
// attributes, id, class, style, and accessibility. Left out: event handlers (on…), cursor,
// conditional processing and anything that names a resource; href is allowed and must be a
// #fragment.
var svgAttributes = setOf(
	// The document, ids and accessibility.
	"version", "baseProfile", "viewBox", "preserveAspectRatio", "id", "class", "style", "lang",
	"role", "aria-label", "aria-labelledby", "aria-describedby", "aria-hidden", "focusable", "href",
	// Geometry.
	"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx", "fy", "fr", "width", "height",
	"d", "points", "pathLength", "transform", "dx", "dy", "rotate", "textLength", "lengthAdjust",
	"startOffset", "method", "spacing", "side", "path",
	// Gradients, patterns, clips, masks, markers.
	"gradientUnits", "gradientTransform", "spreadMethod", "offset", "patternUnits",
	"patternContentUnits", "patternTransform", "clipPathUnits", "maskUnits", "maskContentUnits",
	"markerUnits", "markerWidth", "markerHeight", "refX", "refY", "orient", "type", "media",
	// Filters.
	"filterUnits", "primitiveUnits", "in", "in2", "result", "stdDeviation", "edgeMode", "mode",
	"values", "operator", "k1", "k2", "k3", "k4", "order", "kernelMatrix", "divisor", "bias",
	"targetX", "targetY", "preserveAlpha", "surfaceScale", "diffuseConstant", "specularConstant",
	"specularExponent", "kernelUnitLength", "scale", "xChannelSelector", "yChannelSelector",
	"radius", "baseFrequency", "numOctaves", "seed", "stitchTiles", "tableValues", "slope",
	"intercept", "amplitude", "exponent", "azimuth", "elevation", "z", "pointsAtX", "pointsAtY",
	"pointsAtZ", "limitingConeAngle",
	// Presentation attributes.
	"alignment-baseline", "baseline-shift", "clip", "clip-path", "clip-rule", "color",
	"color-interpolation", "color-interpolation-filters", "color-rendering", "direction", "display",
	"dominant-baseline", "fill", "fill-opacity", "fill-rule", "filter", "flood-color",
	"flood-opacity", "font", "font-family", "font-size", "font-size-adjust", "font-stretch",
	"font-style", "font-variant", "font-weight", "image-rendering", "isolation", "letter-spacing",
	"lighting-color", "marker-start", "marker-mid", "marker-end", "mask", "mask-type",
	"mix-blend-mode", "opacity", "overflow", "paint-order", "pointer-events", "shape-rendering",
	"stop-color", "stop-opacity", "stroke", "stroke-dasharray", "stroke-dashoffset",
	"stroke-linecap", "stroke-linejoin", "stroke-miterlimit", "stroke-opacity", "stroke-width",
	"text-anchor", "text-decoration", "text-rendering", "transform-box", "transform-origin",
	"unicode-bidi", "vector-effect", "visibility", "white-space", "word-spacing", "writing-mode",
)

// svgTextAttributes are the svgAttributes whose values are names or text, never read as CSS.
var svgTextAttributes = setOf("id", "class", "lang", "role", "aria-label", "aria-labelledby",
	"aria-describedby", "aria-hidden", "focusable", "version", "baseProfile")

// cssFunctions are the functions a logo's CSS (a style element or attribute, and every other
// attribute's value) may call. url is allowed with a #fragment only.
var cssFunctions = setOf(
	"url", "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch", "color-mix",
	"var", "calc", "min", "max", "clamp",
	"matrix", "translate", "translatex", "translatey", "scale", "scalex", "scaley", "rotate",
	"skew", "skewx", "skewy",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// checkSVG returns nil when data is an SVG document fit to be a logo: one <svg> root element
// in the SVG namespace, given as the default namespace (no prefix), holding only svgElements
// with svgAttributes, links (href, xlink:href) and CSS url()s to #fragments of the document
// only, and CSS with no at-rule, escape or function beyond cssFunctions. It refuses
// processing instructions (but the XML declaration), a DOCTYPE and so entities, and a "<" in
// CDATA sections or comments, so that the logo stays static drawing wherever it is shown, also inline.
// encoding/xml reads it strictly and decodes character references before any check.
func checkSVG(data []byte) error {
	notImage := fmt.Errorf("logo is not a PNG, JPEG, WebP or SVG image: %w", ErrInvalid)
	if !utf8.Valid(data) {
		return notImage
	}
	src := bytes.TrimPrefix(data, []byte("\ufeff"))
	d := xml.NewDecoder(bytes.NewReader(src))
	d.Strict = true
	var (
		open  []string // the elements open, as written
		root  bool     // the root element was seen
		first = true   // no token was read yet
		start int64    // where the token read starts in src
		css   []byte   // the text of the style element open, checked whole when it closes
	)
	for ; ; first = false {
		start = d.InputOffset()
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if !root {
				return notImage
			}
			return fmt.Errorf("logo is not well-formed SVG (%v): %w", err, ErrInvalid)
		}
		switch tok := tok.(type) {
		case xml.ProcInst:
			if tok.Target == "xml" && first {
				continue
			}
			if tok.Target == "xml" {
				return fmt.Errorf("logo is not well-formed SVG (an XML declaration after the start): %w", ErrInvalid)
			}
			return fmt.Errorf("logo: processing instruction %q is not allowed: %w", tok.Target, ErrInvalid)
		case xml.Directive:
			if bytes.HasPrefix(tok, []byte("DOCTYPE")) && !root {
				return fmt.Errorf("logo: a DOCTYPE is not allowed: %w", ErrInvalid)
			}
			return fmt.Errorf("logo: a declaration (<!%.20s…>) is not allowed, nor a DOCTYPE: %w", tok, ErrInvalid)
		case xml.Comment:
			if bytes.ContainsRune(tok, '<') {
				return fmt.Errorf("logo: \"<\" in a comment is not allowed: %w", ErrInvalid)
			}
		case xml.CharData:
			switch {
			case len(open) > 0:
				elem := open[len(open)-1]
				if bytes.HasPrefix(src[start:], []byte("<![CDATA[")) && bytes.ContainsRune(tok, '<') {
					// Markup an HTML parser would see, were the logo put inline in a page.
					return fmt.Errorf("logo: \"<\" in the text of %q is not allowed: %w", elem, ErrInvalid)
				}
				if elem == "style" {
					css = append(css, tok...)
				}
			case len(bytes.TrimSpace(tok)) == 0:
			case root:
				return fmt.Errorf("logo: text after the root element is not allowed: %w", ErrInvalid)
			default:
				return notImage
			}
		case xml.StartElement:
			name := qname(tok.Name)
			if len(open) > 0 && open[len(open)-1] == "style" {
				return fmt.Errorf("logo: element %q inside \"style\" is not allowed: %w", name, ErrInvalid)
			}
			if len(open) == 0 {
				if root {
					return fmt.Errorf("logo: a second root element %q is not allowed: %w", name, ErrInvalid)
				}
				if err := checkSVGRoot(tok); err != nil {
					if errors.Is(err, errNotSVG) {
						return notImage
					}
					return err
				}
				root = true
			}
			if tok.Name.Space != "" || !svgElements[tok.Name.Local] {
				return fmt.Errorf("logo: element %q is not allowed: %w", name, ErrInvalid)
			}
			if err := checkSVGAttributes(tok); err != nil {
				return err
			}
			open = append(open, name)
		case xml.EndElement:
			if len(open) == 0 || open[len(open)-1] != qname(tok.Name) {
				return fmt.Errorf("logo is not well-formed SVG (</%s> closes no open element): %w", qname(tok.Name), ErrInvalid)
			}
			open = open[:len(open)-1]
			if tok.Name.Space == "" && tok.Name.Local == "style" {
				// The style sheet is the whole text, which CDATA sections and comments may
				// split anywhere, even inside "url(".
				if err := checkLogoCSS(`style of "style"`, string(css)); err != nil {
					return err
				}
				css = css[:0]
			}
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("logo is not well-formed SVG (<%s> is not closed): %w", open[len(open)-1], ErrInvalid)
	}
	if !root {
		return notImage
	}
	return nil
}

// errNotSVG is checkSVGRoot's answer for a root element that is not SVG at all.
var errNotSVG = errors.New("not SVG")

// checkSVGRoot checks the root element: <svg> with the SVG namespace as its default namespace.
func checkSVGRoot(tok xml.StartElement) error {
	if tok.Name.Local != "svg" {
		return errNotSVG
	}
	for _, a := range tok.Attr {
		if a.Name.Space == "" && a.Name.Local == "xmlns" && a.Value == svgNamespace && tok.Name.Space == "" {
			return nil
		}
		if a.Name.Space == "xmlns" && a.Name.Local == tok.Name.Space && a.Value == svgNamespace {
			return fmt.Errorf("logo: SVG must be the default namespace (<svg xmlns=%q>), not under the prefix %q: %w",
				svgNamespace, tok.Name.Space, ErrInvalid)
		}
	}
	return errNotSVG
}

// checkSVGAttributes checks the attributes of an element of svgElements.
func checkSVGAttributes(tok xml.StartElement) error {
	elem := tok.Name.Local
	seen := make(map[xml.Name]bool, len(tok.Attr))
	for _, a := range tok.Attr {
		name := qname(a.Name)
		if seen[a.Name] {
			return fmt.Errorf("logo: attribute %q of %q is given twice: %w", name, elem, ErrInvalid)
		}
		seen[a.Name] = true
		switch {
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			if a.Value != svgNamespace {
				return fmt.Errorf("logo: namespace %q of %q is not allowed, only %q: %w", a.Value, elem, svgNamespace, ErrInvalid)
			}
		case a.Name.Space == "xmlns":
			// Declarations editors write; their prefixes name no element, and only xlink:href
			// an attribute.
			if !(a.Name.Local == "xlink" && a.Value == xlinkNamespace) && !(a.Name.Local == "svg" && a.Value == svgNamespace) {
				return fmt.Errorf("logo: namespace declaration %q of %q is not allowed: %w", name, elem, ErrInvalid)
			}
		case a.Name.Space == "xml" && (a.Name.Local == "space" || a.Name.Local == "lang"):
		case a.Name.Space == "" && a.Name.Local == "href", a.Name.Space == "xlink" && a.Name.Local == "href":
			if !isFragment(a.Value) {
				return fmt.Errorf("logo: link %q of %q must be a #fragment of the logo itself: %w", a.Value, elem, ErrInvalid)
			}
		case a.Name.Space == "" && svgAttributes[a.Name.Local]:
			if a.Name.Local == "type" && elem == "style" && a.Value != "text/css" {
				return fmt.Errorf("logo: style of type %q is not allowed, only text/css: %w", a.Value, ErrInvalid)
			}
			if svgTextAttributes[a.Name.Local] {
				continue
			}
			what := fmt.Sprintf("attribute %q of %q", name, elem)
			if a.Name.Local == "style" {
				what = fmt.Sprintf("style of %q", elem)
			}
			if err := checkLogoCSS(what, a.Value); err != nil {
				return err
			}
		default:
			return fmt.Errorf("logo: attribute %q of %q is not allowed: %w", name, elem, ErrInvalid)
		}
	}
	return nil
}

// checkLogoCSS checks CSS (or an attribute's value, read as CSS) of a logo: no at-rule (such
// as @import), no escape (which could spell one, or a url), and no function but cssFunctions,
// url with a #fragment only. what names where the CSS is.
func checkLogoCSS(what, css string) error {
	refuse := func(s string) error {
		return fmt.Errorf("logo: %s has %q, which is not allowed (CSS may have no @ rules or escapes, "+
			"and url(#fragment) and colour, calc and transform functions only): %w", what, s, ErrInvalid)
	}
	if i := strings.IndexAny(css, `@\`); i >= 0 {
		return refuse(css[i : i+1])
	}
	for rest := css; ; {
		i := strings.IndexByte(rest, '(')
		if i < 0 {
			return nil
		}
		j := i
		for j > 0 && isCSSNameByte(rest[j-1]) {
			j--
		}
		fn := strings.ToLower(rest[j:i])
		switch {
		case fn == "url":
			end := strings.IndexByte(rest[i:], ')')
			if end < 0 {
				return refuse(rest[j:])
			}
			arg := strings.Trim(strings.TrimSpace(rest[i+1:i+end]), `"'`)
			if !isFragment(arg) {
				return refuse(rest[j : i+end+1])
			}
		case fn != "" && !cssFunctions[fn]:
			return refuse(rest[j : i+1])
		}
		rest = rest[i+1:]
	}
}

// isCSSNameByte reports whether c may be part of the name of a CSS function as a logo writes
// it (escapes are refused before).
func isCSSNameByte(c byte) bool {
	return c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// isFragment reports whether link is a #fragment naming an element of the document by its id:
// "#" and at least one of the characters of an XML name, nothing else.
func isFragment(link string) bool {
	if len(link) < 2 || link[0] != '#' {
		return false
	}
	for _, r := range link[1:] {
		if !(r == '-' || r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// qname is name as it was written, with its prefix.
func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// CheckAccentColor returns color ("#RRGGBB", or "" for visid's own) in lower case, when it
// contrasts with PageBackground and with ButtonText by at least MinAccentContrast (WCAG AA).
// The error wraps ErrInvalid and gives the ratio found and the one required.
func CheckAccentColor(color string) (string, error) {
	if color == "" {
		return "", nil
	}
	rgb, ok := parseHexColor(color)
	if !ok {
		return "", fmt.Errorf("accent colour %q is not of the form #RRGGBB: %w", color, ErrInvalid)
	}
	color = strings.ToLower(color)
	for _, against := range []struct{ what, hex string }{
		{"the page background", PageBackground},
		{"the button text", ButtonText},
	} {
		other, _ := parseHexColor(against.hex)
		if r := ContrastRatio(rgb, other); r < MinAccentContrast {
			// Rounded down, so a ratio just below the minimum never reads as the minimum.
			return "", fmt.Errorf("accent colour %s has a contrast ratio of %.2f:1 with %s (%s); WCAG AA requires at least %.1f:1: %w",
				color, math.Floor(r*100)/100, against.what, against.hex, MinAccentContrast, ErrInvalid)
		}
	}
	return color, nil
}

// ContrastRatio returns the WCAG 2 contrast ratio of two sRGB colours, from 1 to 21.
func ContrastRatio(a, b [3]uint8) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// luminance is WCAG 2's relative luminance of an sRGB colour.
func luminance(c [3]uint8) float64 {
	lin := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c[0]) + 0.7152*lin(c[1]) + 0.0722*lin(c[2])
}

// parseHexColor parses "#RRGGBB" (either case).
func parseHexColor(s string) ([3]uint8, bool) {
	var c [3]uint8
	if len(s) != 7 || s[0] != '#' {
		return c, false
	}
	for i := range 3 {
		v, err := strconv.ParseUint(s[1+2*i:3+2*i], 16, 8)
		if err != nil {
			return c, false
		}
		c[i] = uint8(v)
	}
	return c, true
}

// CheckLanguage returns tag ("" for none) as a canonical BCP 47 language tag ("en-us" gives
// "en-US"). It refuses what golang.org/x/text/language cannot parse and the undetermined
// language "und". The error wraps ErrInvalid.
func CheckLanguage(tag string) (string, error) {
	if tag == "" {
		return "", nil
	}
	t, err := language.Parse(tag)
	if err != nil || len(tag) > 35 {
		return "", fmt.Errorf("language %q is not a BCP 47 language tag (such as en, de-CH or ja): %w", tag, ErrInvalid)
	}
	if canon := t.String(); canon == "und" || strings.HasPrefix(canon, "und-") {
		return "", fmt.Errorf("language %q names no language: %w", tag, ErrInvalid)
	}
	return t.String(), nil
}
