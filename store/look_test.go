package store

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

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
		{"svg script", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`, `element "script" is not allowed`},
		{"svg namespaced script", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:h="http://www.w3.org/1999/xhtml"><h:script>x</h:script></svg>`, `namespace declaration "xmlns:h" of "svg" is not allowed`},
		{"svg onload", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`, `attribute "onload" of "svg" is not allowed`},
		{"svg foreignObject", `<svg xmlns="http://www.w3.org/2000/svg"><foreignObject/></svg>`, `element "foreignObject" is not allowed`},
		{"svg javascript link", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href=" JavaScript:alert(1)"/></svg>`, `link " JavaScript:alert(1)" of "use" must be a #fragment`},
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

// svgDoc is an SVG logo with body inside its root element.
func svgDoc(body string) string {
	return `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 100 40">` + body + `</svg>`
}

// TestCheckLogoSVGRefused: an SVG logo is static drawing only; each refusal names the first
// thing refused.
func TestCheckLogoSVGRefused(t *testing.T) {
	for _, tc := range refusedSVGLogos {
		t.Run(tc.name, func(t *testing.T) {
			typ, err := CheckLogo([]byte(tc.data))
			require.ErrorIs(t, err, ErrInvalid, "accepted as %q", typ)
			assert.Contains(t, err.Error(), "logo")
			assert.Contains(t, err.Error(), tc.says)
		})
	}
}

// refusedSVGLogos are SVG logos CheckLogo refuses, with what its error says.
var refusedSVGLogos = []struct {
	name, data, says string
}{
	// Links that run script, however they are written.
	{"javascript link with a character reference", svgDoc(`<a href="&#106;avascript:alert(1)"><rect width="1" height="1"/></a>`), `element "a" is not allowed`},
	{"javascript use link with a character reference", svgDoc(`<use href="&#106;avascript:alert(1)"/>`), `link "javascript:alert(1)" of "use" must be a #fragment`},
	{"javascript use link with a tab", svgDoc("<use xlink:href=\"java\tscript:alert(1)\"/>"), `link "java\tscript:alert(1)" of "use" must be a #fragment`},
	{"javascript link with an encoded newline", svgDoc(`<use xlink:href="java&#10;script:alert(1)"/>`), `of "use" must be a #fragment`},
	{"javascript link with an encoded tab", svgDoc(`<use xlink:href="java&#x9;script:alert(1)"/>`), `of "use" must be a #fragment`},
	// Animation that writes links or values.
	{"animate writing href", svgDoc(`<a><animate attributeName="href" values="#a;javascript:alert(1)"/><text>x</text></a>`), `element "a" is not allowed`},
	{"animate", svgDoc(`<use href="#a"><animate attributeName="href" values="#a;javascript:alert(1)"/></use>`), `element "animate" is not allowed`},
	{"set", svgDoc(`<use href="#a"><set attributeName="href" to=" #a"/></use>`), `element "set" is not allowed`},
	{"animateTransform", svgDoc(`<rect width="1" height="1"><animateTransform attributeName="transform" type="rotate" from="0" to="360" dur="1s"/></rect>`), `element "animateTransform" is not allowed`},
	{"animateMotion", svgDoc(`<rect width="1" height="1"><animateMotion path="M0 0h9"/></rect>`), `element "animateMotion" is not allowed`},
	// XHTML and other foreign content.
	{"xhtml meta refresh", svgDoc(`<meta xmlns="http://www.w3.org/1999/xhtml" http-equiv="refresh" content="0;url=https://evil.example/"/>`), `element "meta" is not allowed`},
	{"xhtml base", svgDoc(`<base xmlns="http://www.w3.org/1999/xhtml" href="https://evil.example/"/>`), `element "base" is not allowed`},
	{"xhtml form by prefix", `<svg xmlns="http://www.w3.org/2000/svg" xmlns:h="http://www.w3.org/1999/xhtml"><h:form action="https://evil.example/"><h:input name="p"/></h:form></svg>`, `namespace declaration "xmlns:h" of "svg" is not allowed`},
	{"xhtml namespace declared on a group", svgDoc(`<g xmlns="http://www.w3.org/1999/xhtml"><rect/></g>`), `namespace "http://www.w3.org/1999/xhtml" of "g" is not allowed`},
	{"foreignObject", svgDoc(`<foreignObject width="9" height="9"><p xmlns="http://www.w3.org/1999/xhtml">hi</p></foreignObject>`), `element "foreignObject" is not allowed`},
	{"handler", svgDoc(`<handler xmlns:ev="http://www.w3.org/2001/xml-events" ev:event="load">alert(1)</handler>`), `element "handler" is not allowed`},
	{"script", svgDoc(`<script>alert(1)</script>`), `element "script" is not allowed`},
	{"image", svgDoc(`<image href="https://evil.example/track.png" width="1" height="1"/>`), `element "image" is not allowed`},
	{"iframe", svgDoc(`<iframe src="https://evil.example/"/>`), `element "iframe" is not allowed`},
	{"feImage", svgDoc(`<filter id="f"><feImage href="https://evil.example/a.png"/></filter>`), `element "feImage" is not allowed`},
	// Style sheets and resources outside the document.
	{"xml-stylesheet", `<?xml version="1.0"?><?xml-stylesheet href="https://evil.example/a.css"?>` + svgDoc(``), `processing instruction "xml-stylesheet" is not allowed`},
	{"processing instruction inside", svgDoc(`<?php echo 1 ?>`), `processing instruction "php" is not allowed`},
	{"@import in a style element", svgDoc(`<style>@import url(https://evil.example/a.css);</style>`), `style of "style" has "@"`},
	{"@import without url", svgDoc(`<style>@import "https://evil.example/a.css";</style>`), `style of "style" has "@"`},
	{"external url in a style element", svgDoc(`<style>rect{fill:url(https://evil.example/p.svg#g)}</style><rect width="1" height="1"/>`), `style of "style" has "url(https://evil.example/p.svg#g)"`},
	{"external url in a style attribute", svgDoc(`<rect width="1" height="1" style="fill: url('https://evil.example/p.svg#g')"/>`), `style of "rect" has "url('https://evil.example/p.svg#g')"`},
	{"external url in a presentation attribute", svgDoc(`<rect width="1" height="1" fill="url(https://evil.example/p.svg#g)"/>`), `attribute "fill" of "rect" has "url(https://evil.example/p.svg#g)"`},
	{"data url in a filter attribute", svgDoc(`<rect width="1" height="1" filter="url(data:image/svg+xml;base64,PHN2Zz4=#f)"/>`), `attribute "filter" of "rect" has "url(data:`},
	{"url( split by a CDATA section", svgDoc(`<style>rect{fill:url<![CDATA[(https://evil.example/p.svg#g)]]>}</style>`), `style of "style" has "url(https://evil.example/p.svg#g)"`},
	{"url( split by a comment", svgDoc(`<style>rect{fill:url<!---->(https://evil.example/p.svg#g)}</style>`), `style of "style" has "url(https://evil.example/p.svg#g)"`},
	{"element inside style", svgDoc(`<style>rect{fill:red}<g/></style>`), `element "g" inside "style" is not allowed`},
	{"css escape hiding url", svgDoc(`<style>rect{fill:u\72l(https://evil.example/p.svg#g)}</style>`), `style of "style" has "\\"`},
	{"image-set", svgDoc(`<style>rect{fill:image-set("https://evil.example/a.png" 1x)}</style>`), `style of "style" has "image-set("`},
	{"css expression", svgDoc(`<rect width="1" height="1" style="width:expression(alert(1))"/>`), `style of "rect" has "expression("`},
	{"external use", svgDoc(`<use href="https://evil.example/sprite.svg#logo"/>`), `link "https://evil.example/sprite.svg#logo" of "use" must be a #fragment`},
	{"data use", svgDoc(`<use href="data:image/svg+xml;base64,PHN2Zz4=#a"/>`), `link "data:image/svg+xml;base64,PHN2Zz4=#a" of "use" must be a #fragment`},
	{"external gradient", svgDoc(`<linearGradient id="g" xlink:href="https://evil.example/g.svg#g"/>`), `of "linearGradient" must be a #fragment`},
	{"xpointer fragment", svgDoc(`<use href="#xpointer(id('a'))"/>`), `must be a #fragment`},
	{"style sheet type", svgDoc(`<style type="text/xsl">rect{}</style>`), `style of type "text/xsl" is not allowed`},
	// Event handlers and other attributes.
	{"onload", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`, `attribute "onload" of "svg" is not allowed`},
	{"onclick on a path", svgDoc(`<path d="M0 0h1" onclick="alert(1)"/>`), `attribute "onclick" of "path" is not allowed`},
	{"namespaced event attribute", svgDoc(`<rect xmlns:ev="http://www.w3.org/2001/xml-events" ev:event="click" width="1" height="1"/>`), `namespace declaration "xmlns:ev" of "rect" is not allowed`},
	{"xml:base", svgDoc(`<g xml:base="https://evil.example/"><use href="#a"/></g>`), `attribute "xml:base" of "g" is not allowed`},
	{"cursor", svgDoc(`<rect width="1" height="1" cursor="url(https://evil.example/c.png)"/>`), `attribute "cursor" of "rect" is not allowed`},
	{"attribute given twice", svgDoc(`<rect width="1" width="2"/>`), `attribute "width" of "rect" is given twice`},
	// The document's shape.
	{"second root", svgDoc(`<rect width="1" height="1"/>`) + `<x:html xmlns:x="http://www.w3.org/1999/xhtml"><x:meta http-equiv="refresh" content="0;url=https://evil.example/"/></x:html>`, `a second root element "x:html" is not allowed`},
	{"text after the root", svgDoc(``) + `hello`, `text after the root element`},
	{"prefixed svg with a data link", `<s:svg xmlns:s="http://www.w3.org/2000/svg"><s:use href="data:text/html,x"/></s:svg>`, `SVG must be the default namespace`},
	{"doctype", `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">` + svgDoc(``), `DOCTYPE`},
	{"entity", `<!DOCTYPE svg [<!ENTITY x "javascript:alert(1)">]>` + svgDoc(`<use href="&x;"/>`), `DOCTYPE`},
	{"undeclared entity", svgDoc(`<use href="&x;"/>`), `well-formed`},
	{"mismatched end", svgDoc(`<g></rect>`), `well-formed`},
	{"markup hidden in CDATA", svgDoc(`<title><![CDATA[<img src=x onerror=alert(1)>]]></title>`), `"<" in the text of "title"`},
	{"markup hidden in a comment", svgDoc(`<!--><img src=x onerror=alert(1)>-->`), `"<" in a comment`},
	{"xml declaration not first", svgDoc(``) + `<?xml version="1.0"?>`, `well-formed`},
}

// legitimateSVGLogos are logos as design tools and people write them: CheckLogo accepts each.
var legitimateSVGLogos = map[string]string{
	"gradient and text": `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!-- Created by hand -->
<svg xmlns="http://www.w3.org/2000/svg" width="240" height="64" viewBox="0 0 240 64" role="img" aria-label="Acme Corp(tm) – hello@acme.example">
  <title id="t">Acme Corp.</title>
  <desc>The Acme wave &amp; the name</desc>
  <defs>
    <linearGradient id="sky" x1="0" y1="0" x2="0" y2="1" gradientUnits="objectBoundingBox">
      <stop offset="0" stop-color="#1d5bb8"/>
      <stop offset="100%" stop-color="#0b5d3b" stop-opacity=".8"/>
    </linearGradient>
    <radialGradient id="sun" cx="50%" cy="50%" r="50%" fx="40%" fy="40%" spreadMethod="pad">
      <stop offset="0" style="stop-color:#ffd54a"/>
      <stop offset="1" style="stop-color: rgb(244, 163, 0); stop-opacity: 0.5"/>
    </radialGradient>
    <linearGradient id="sky2" href="#sky" gradientTransform="rotate(90)"/>
  </defs>
  <rect x="4" y="8" width="48" height="48" rx="12" fill="url(#sky)"/>
  <circle cx="28" cy="32" r="10" fill="url('#sun')" stroke="url(&quot;#sky2&quot;)"/>
  <path d="M12 38c6-6 10-6 16 0s10 6 16 0" fill="none" stroke="#ffffff" stroke-width="4" stroke-linecap="round"/>
  <text x="64" y="42" font-family="'DejaVu Sans', Helvetica, Arial, sans-serif" font-size="26" font-weight="700" fill="#1f4e8c">Acme <tspan fill="#0b5d3b" dx="2">Corp.</tspan></text>
</svg>
`,
	"symbols and use": `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 120 40">
  <defs><symbol id="leaf" viewBox="0 0 10 10"><path d="M0 10Q0 0 10 0Q10 10 0 10z"/></symbol></defs>
  <use xlink:href="#leaf" x="0" y="0" width="40" height="40" fill="#2e7d32"/>
  <use href="#leaf" x="40" width="40" height="40" transform="scale(-1 1) translate(-120 0)"/>
  <g transform="matrix(1 0 0 1 80 0)" opacity="0.9"><polygon points="0,40 20,0 40,40"/><polyline points="0,0 40,40" stroke="#000"/><line x1="0" y1="20" x2="40" y2="20" stroke="#000"/><ellipse cx="20" cy="20" rx="5" ry="3"/></g>
</svg>`,
	"style element with classes": `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 50 50">
  <style type="text/css"><![CDATA[
    .st0 { fill: #1d5bb8; }
    .st1 { fill: url(#g); stroke: hsl(210, 50%, 40%); stroke-width: calc(2px + 1px); }
    g > .st0:first-child { opacity: .5 } /* a comment */
  ]]></style>
  <linearGradient id="g"><stop offset="0" stop-color="red"/><stop offset="1" stop-color="blue"/></linearGradient>
  <g><rect class="st0" width="50" height="25"/><rect class="st1" y="25" width="50" height="25"/></g>
</svg>`,
	"clip, mask, pattern, marker and filter": `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" viewBox="0 0 100 100" preserveAspectRatio="xMidYMid meet">
  <defs>
    <clipPath id="c" clipPathUnits="userSpaceOnUse"><circle cx="50" cy="50" r="40"/></clipPath>
    <mask id="m" maskUnits="userSpaceOnUse"><rect width="100" height="100" fill="#fff"/></mask>
    <pattern id="p" width="10" height="10" patternUnits="userSpaceOnUse"><rect width="5" height="5"/></pattern>
    <marker id="arrow" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z"/></marker>
    <filter id="shadow" x="-20%" y="-20%" width="140%" height="140%" color-interpolation-filters="sRGB">
      <feGaussianBlur in="SourceAlpha" stdDeviation="2" result="blur"/>
      <feOffset in="blur" dx="1" dy="1" result="off"/>
      <feFlood flood-color="#000" flood-opacity=".3"/>
      <feComposite in2="off" operator="in"/>
      <feColorMatrix type="matrix" values="1 0 0 0 0  0 1 0 0 0  0 0 1 0 0  0 0 0 1 0"/>
      <feMerge><feMergeNode/><feMergeNode in="SourceGraphic"/></feMerge>
      <feDropShadow dx="1" dy="1" stdDeviation="1"/>
    </filter>
  </defs>
  <g clip-path="url(#c)" mask="url(#m)" filter="url(#shadow)"><rect width="100" height="100" fill="url(#p)"/></g>
  <path d="M10 90L90 10" stroke="#000" marker-end="url(#arrow)" vector-effect="non-scaling-stroke"/>
  <text xml:space="preserve" x="5" y="95" text-anchor="start" style="font: bold 8px sans-serif">A&lt;B</text>
</svg>`,
}

func TestCheckLogoSVGAccepted(t *testing.T) {
	logos := map[string][]byte{}
	for name, doc := range legitimateSVGLogos {
		logos[name] = []byte(doc)
	}
	// The logos and pictures visid ships as SVG.
	files, err := filepath.Glob("../oidc2fa/picture/images/*.svg")
	require.NoError(t, err)
	files = append(files, "../examples/rp/testdata/tenant-logo.svg")
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		logos[f] = data
	}
	require.Greater(t, len(logos), len(legitimateSVGLogos)+1)
	for name, data := range logos {
		t.Run(name, func(t *testing.T) {
			typ, err := CheckLogo(data)
			require.NoError(t, err)
			assert.Equal(t, LogoSVG, typ)
		})
	}
}

// FuzzCheckLogo: CheckLogo never panics, and an SVG it accepts, read again with namespaces
// resolved and references decoded, has only SVG elements, no event handler, and no link or
// url() out of the document.
func FuzzCheckLogo(f *testing.F) {
	for _, doc := range legitimateSVGLogos {
		f.Add([]byte(doc))
	}
	for _, tc := range refusedSVGLogos {
		f.Add([]byte(tc.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, err := CheckLogo(data)
		if err != nil || typ != LogoSVG {
			return
		}
		d := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				return
			}
			require.NoError(t, err, "an accepted SVG reads well")
			switch tok := tok.(type) {
			case xml.StartElement:
				require.Equal(t, svgNamespace, tok.Name.Space, "element %q", tok.Name.Local)
				require.NotContains(t, []string{"script", "foreignobject", "animate", "set", "handler", "a", "image", "feimage", "iframe"},
					strings.ToLower(tok.Name.Local))
				for _, a := range tok.Attr {
					if a.Name.Space == "xmlns" || a.Name.Local == "xmlns" {
						continue // a namespace declaration, checked by the Equal above
					}
					require.False(t, strings.HasPrefix(strings.ToLower(a.Name.Local), "on"), "attribute %q", a.Name.Local)
					v := strings.ToLower(strings.Map(func(r rune) rune {
						if unicode.IsSpace(r) || unicode.IsControl(r) {
							return -1
						}
						return r
					}, a.Value))
					for _, bad := range []string{"javascript:", "data:", "http:", "https:", "@import", "url(//"} {
						require.NotContains(t, v, bad, "attribute %q", a.Name.Local)
					}
					if a.Name.Local == "href" {
						require.True(t, strings.HasPrefix(a.Value, "#"), "link %q", a.Value)
					}
				}
			case xml.ProcInst:
				require.Equal(t, "xml", tok.Target)
			case xml.Directive:
				t.Fatalf("a directive: %s", tok)
			}
		}
	})
}
