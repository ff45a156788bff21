package store

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContrastRatio(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#ffffff", "#ffffff", 1},
		{"#777777", "#ffffff", 4.48}, // the classic grey just below AA
		{"#767676", "#ffffff", 4.54},
		{"#1d5bb8", "#f4f6f8", 6.0}, // visid's own accent on its page
	} {
		a, _ := parseHexColor(tc.a)
		b, _ := parseHexColor(tc.b)
		assert.InDelta(t, tc.want, ContrastRatio(a, b), 0.02, "%s on %s", tc.a, tc.b)
		assert.InDelta(t, ContrastRatio(a, b), ContrastRatio(b, a), 1e-12, "symmetric")
	}
}

func TestCheckAccentColor(t *testing.T) {
	for in, want := range map[string]string{"": "", "#1D5BB8": "#1d5bb8", "#000000": "#000000", "#0b5d3b": "#0b5d3b"} {
		got, err := CheckAccentColor(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got)
	}
	for _, in := range []string{"#fff", "1d5bb8", "#1d5bb8ff", "#gggggg", "blue", " #1d5bb8", "#1d5bb"} {
		_, err := CheckAccentColor(in)
		assert.ErrorIs(t, err, ErrInvalid, in)
		if err != nil {
			assert.Contains(t, err.Error(), "#RRGGBB", in)
		}
	}
	// Too light: the message gives the ratio found, rounded down, and the one required.
	_, err := CheckAccentColor("#777777")
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "4.13:1")
	assert.Contains(t, err.Error(), "page background (#f4f6f8)")
	assert.Contains(t, err.Error(), "at least 4.5:1")
	_, err = CheckAccentColor("#ffff00")
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "1.0")
}

func TestCheckLanguage(t *testing.T) {
	for in, want := range map[string]string{"": "", "en": "en", "EN-us": "en-US", "de-ch": "de-CH", "ja": "ja",
		"zh-hant-tw": "zh-Hant-TW", "pt-BR": "pt-BR"} {
		got, err := CheckLanguage(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"und", "english", "en_US!", "x", "en--US", strings.Repeat("a", 40), "und-CH"} {
		_, err := CheckLanguage(in)
		assert.ErrorIs(t, err, ErrInvalid, in)
	}
}

func TestCheckLogo(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	var p, j bytes.Buffer
	require.NoError(t, png.Encode(&p, img))
	require.NoError(t, jpeg.Encode(&j, img, nil))
	webp := []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"png", p.Bytes(), LogoPNG},
		{"jpeg", j.Bytes(), LogoJPEG},
		{"webp", webp, LogoWebP},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><path d="M0 0h1v1z"/></svg>`), LogoSVG},
		{"svg with prolog and comment", []byte("\ufeff<?xml version=\"1.0\"?>\n<!-- logo -->\n<svg xmlns=\"http://www.w3.org/2000/svg\"><title>Acme</title></svg>"), LogoSVG},
	} {
		got, err := CheckLogo(tc.data)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	for _, tc := range []struct {
		name, data, says string
	}{
		{"empty", "", "empty"},
		{"too large", "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", MaxLogoSize), "at most 262144"},
		{"gif", "GIF89a\x01\x00\x01\x00\x00\x00\x00;", "not a PNG, JPEG, WebP or SVG"},
		{"html", "<html><body>hi</body></html>", "not a PNG, JPEG, WebP or SVG"},
		{"text", "hello", "not a PNG, JPEG, WebP or SVG"},
		{"svg without namespace", "<svg><rect/></svg>", "not a PNG, JPEG, WebP or SVG"},
		{"truncated png", string(p.Bytes()[:12]), "not a valid PNG"},
		{"bad jpeg", "\xff\xd8\xff\x00\x00", "not a valid JPEG"},
		{"webp with a wrong size", string(webp[:len(webp)-1]), "not a valid WebP"},
		{"svg script", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`, "<script>"},
		{"svg namespaced script", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:h="http://www.w3.org/1999/xhtml"><h:script>x</h:script></svg>`, "<script>"},
		{"svg onload", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`, "event handler"},
		{"svg foreignObject", `<svg xmlns="http://www.w3.org/2000/svg"><foreignObject/></svg>`, "<foreignObject>"},
		{"svg javascript link", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href=" JavaScript:alert(1)"/></svg>`, "javascript:"},
		{"svg doctype", `<!DOCTYPE svg [<!ENTITY a "b">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>`, "DOCTYPE"},
		{"svg unclosed", `<svg xmlns="http://www.w3.org/2000/svg"><g>`, "well-formed"},
		{"not utf-8", "<svg xmlns=\"http://www.w3.org/2000/svg\">\xff</svg>", "not a PNG, JPEG, WebP or SVG"},
	} {
		_, err := CheckLogo([]byte(tc.data))
		require.ErrorIs(t, err, ErrInvalid, tc.name)
		assert.Contains(t, err.Error(), tc.says, tc.name)
	}
}

func TestCheckTenant(t *testing.T) {
	tn := Tenant{ID: "acme", DisplayName: "Acme", Logo: []byte{}, LogoType: "image/png", LogoHash: [32]byte{1},
		AccentColor: "#0B5D3B", DefaultLanguage: "fr-ca"}
	require.NoError(t, CheckTenant(&tn))
	assert.Nil(t, tn.Logo)
	assert.Empty(t, tn.LogoType, "no logo, no type")
	assert.Zero(t, tn.LogoHash)
	assert.Equal(t, "#0b5d3b", tn.AccentColor)
	assert.Equal(t, "fr-CA", tn.DefaultLanguage)
	for _, name := range []string{strings.Repeat("a", MaxDisplayNameLength+1), "a\tb", "\xff"} {
		assert.ErrorIs(t, CheckTenant(&Tenant{ID: "acme", DisplayName: name}), ErrInvalid, "%q", name)
	}
	require.NoError(t, CheckTenant(&Tenant{ID: "acme", DisplayName: strings.Repeat("é", MaxDisplayNameLength)}))
}
