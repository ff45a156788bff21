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
// and an SVG that is not an <svg> document or that holds scripts, event handlers, embedded
// foreign content or a DOCTYPE. The error wraps ErrInvalid.
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

// svgNamespace is the namespace of an SVG document's root element.
const svgNamespace = "http://www.w3.org/2000/svg"

// checkSVG returns nil when data is an SVG document fit to be a logo.
func checkSVG(data []byte) error {
	notImage := fmt.Errorf("logo is not a PNG, JPEG, WebP or SVG image: %w", ErrInvalid)
	if !utf8.Valid(data) {
		return notImage
	}
	d := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	root := false
	for {
		tok, err := d.Token()
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
		case xml.Directive:
			if root {
				return fmt.Errorf("logo SVG has a directive inside it: %w", ErrInvalid)
			}
			return fmt.Errorf("logo SVG has a DOCTYPE, which is not allowed: %w", ErrInvalid)
		case xml.StartElement:
			if !root {
				if tok.Name.Local != "svg" || tok.Name.Space != svgNamespace {
					return notImage
				}
				root = true
			}
			switch strings.ToLower(tok.Name.Local) {
			case "script", "foreignobject", "iframe", "embed", "object":
				return fmt.Errorf("logo SVG contains a <%s> element, which is not allowed: %w", tok.Name.Local, ErrInvalid)
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					return fmt.Errorf("logo SVG has an event handler attribute %q, which is not allowed: %w", a.Name.Local, ErrInvalid)
				}
				if v := strings.ToLower(strings.TrimSpace(a.Value)); strings.HasPrefix(v, "javascript:") {
					return fmt.Errorf("logo SVG has a javascript: URL, which is not allowed: %w", ErrInvalid)
				}
			}
		case xml.CharData:
			if !root && len(bytes.TrimSpace(tok)) > 0 {
				return notImage
			}
		}
	}
	if !root {
		return notImage
	}
	return nil
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
