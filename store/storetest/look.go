package storetest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// The tenant's look and second-factor policy: Tenants.Update and the values CheckTenant puts in
// canonical form.
func tenantLookTests() []test {
	return []test{
		{"CreateWithLook", testTenantCreateWithLook},
		{"CreateInvalidLook", testTenantCreateInvalidLook},
		{"UpdateGetList", testTenantUpdateGetList},
		{"ListLeavesLogosOut", testTenantListLeavesLogosOut},
		{"UpdateCanonical", testTenantUpdateCanonical},
		{"UpdateRemovesLogo", testTenantUpdateRemovesLogo},
		{"SecondFactor", testTenantSecondFactor},
		{"UpdateNotFound", testTenantUpdateNotFound},
		{"UpdateInvalidStoresNothing", testTenantUpdateInvalid},
		{"UpdateFuncErrorStoresNothing", testTenantUpdateFuncError},
		{"UpdateSharesNoMemory", testTenantUpdateSharesNoMemory},
		{"UpdatesNotLost", testTenantConcurrentUpdates},
		{"UpdateKeepsUsers", testTenantUpdateKeepsUsers},
	}
}

// testPNG returns a small PNG image, distinct for each shade.
func testPNG(t *testing.T, shade uint8) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 2))
	for x := range 4 {
		img.Set(x, 1, color.RGBA{shade, 80, 160, 255})
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

const testSVG = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#1d5bb8"/></svg>`

// lookOf is the part of a tenant the look tests compare.
func lookOf(t store.Tenant) string {
	return fmt.Sprintf("id=%s name=%q logo=%d:%x type=%s hash=%x accent=%s lang=%s second=%q",
		t.ID, t.DisplayName, len(t.Logo), sha256.Sum256(t.Logo), t.LogoType, t.LogoHash, t.AccentColor, t.DefaultLanguage,
		t.SecondFactor)
}

// Create stores the look and the second-factor policy with the tenant, in canonical form; Get
// and List return them.
func testTenantCreateWithLook(t *testing.T, b store.Backend) {
	logo := testPNG(t, 1)
	require.NoError(t, b.Tenants.Create(ctx(), store.Tenant{ID: acme, DisplayName: "Acme", Created: day(1, 1, 0),
		Logo: logo, LogoType: "text/html", AccentColor: "#1D5BB8", DefaultLanguage: "de-ch",
		SecondFactor: store.SecondFactorPictureOrPasskey}))
	got, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, logo, got.Logo)
	assert.Equal(t, store.LogoPNG, got.LogoType, "the type comes from the bytes, not from the caller")
	assert.Equal(t, sha256.Sum256(logo), got.LogoHash)
	assert.Equal(t, "#1d5bb8", got.AccentColor)
	assert.Equal(t, "de-CH", got.DefaultLanguage)
	assert.Equal(t, store.SecondFactorPictureOrPasskey, got.SecondFactor)
	assert.True(t, got.PasskeysAllowed())
	ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
	require.NoError(t, err)
	require.Len(t, ts, 1)
	listed := *got
	listed.Logo = nil
	assert.Equal(t, lookOf(listed), lookOf(ts[0]), "List: the look without the logo's bytes")
}

// Create: ErrInvalid if CheckTenant refuses the look; nothing is stored.
func testTenantCreateInvalidLook(t *testing.T, b store.Backend) {
	for name, tn := range map[string]store.Tenant{
		"low contrast": {AccentColor: "#999999"},
		"not a colour": {AccentColor: "blue"},
		"not an image": {Logo: []byte("GIF89a……")},
		"bad language": {DefaultLanguage: "not a tag"},
		"long name":    {DisplayName: strings.Repeat("x", store.MaxDisplayNameLength+1)},
		"bad policy":   {SecondFactor: "passkey"},
		"policy case":  {SecondFactor: "Picture-Or-Passkey"},
	} {
		tn.ID = acme
		assert.ErrorIs(t, b.Tenants.Create(ctx(), tn), store.ErrInvalid, name)
	}
	ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
	require.NoError(t, err)
	assert.Empty(t, ts)
}

// Update stores what fn left; Get and List return it, and the rest of the tenant is kept.
func testTenantUpdateGetList(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	logo := testPNG(t, 2)
	got, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
		tn.DisplayName = "Acme Corp. – Zürich"
		tn.Logo = logo
		tn.AccentColor = "#0b5d3b"
		tn.DefaultLanguage = "ja"
		return nil
	})
	require.NoError(t, err)
	want := store.Tenant{ID: acme, DisplayName: "Acme Corp. – Zürich", Logo: logo, LogoType: store.LogoPNG,
		LogoHash: sha256.Sum256(logo), AccentColor: "#0b5d3b", DefaultLanguage: "ja"}
	assert.Equal(t, lookOf(want), lookOf(*got), "Update's result")
	stored, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, lookOf(want), lookOf(*stored), "Get after Update")
	assert.True(t, stored.Created.Equal(day(1, 1, 0)), "Created is kept: %v", stored.Created)
	ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
	require.NoError(t, err)
	require.Len(t, ts, 2)
	listed := want
	listed.Logo = nil
	assert.Equal(t, lookOf(listed), lookOf(ts[0]), "List after Update: the look without the logo's bytes")
	assert.Nil(t, ts[0].Logo)
	assert.Equal(t, "Tenant "+globex, ts[1].DisplayName, "the other tenant is unchanged")
	assert.Empty(t, ts[1].Logo)
	assert.Empty(t, ts[1].AccentColor)

	// Each value is kept by an Update that changes another.
	svg := []byte(testSVG)
	_, err = b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error { tn.Logo = svg; return nil })
	require.NoError(t, err)
	stored, err = b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	want.Logo, want.LogoType, want.LogoHash = svg, store.LogoSVG, sha256.Sum256(svg)
	assert.Equal(t, lookOf(want), lookOf(*stored))
}

// CheckTenant's canonical forms are what is stored: the colour in lower case, the language tag
// canonical, the logo's type and hash from its bytes whatever the caller set.
func testTenantUpdateCanonical(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	got, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
		tn.Logo = []byte(testSVG)
		tn.LogoType, tn.LogoHash = "image/png", [32]byte{9}
		tn.AccentColor = "#0B5D3B"
		tn.DefaultLanguage = "EN-us"
		return nil
	})
	require.NoError(t, err)
	stored, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	for _, tn := range []*store.Tenant{got, stored} {
		assert.Equal(t, store.LogoSVG, tn.LogoType)
		assert.Equal(t, sha256.Sum256([]byte(testSVG)), tn.LogoHash)
		assert.Equal(t, "#0b5d3b", tn.AccentColor)
		assert.Equal(t, "en-US", tn.DefaultLanguage)
	}
}

// An Update that empties Logo removes the logo: no type, no hash; "" values restore visid's look.
func testTenantUpdateRemovesLogo(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	_, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
		tn.Logo, tn.AccentColor, tn.DefaultLanguage = testPNG(t, 3), "#000000", "fr"
		return nil
	})
	require.NoError(t, err)
	_, err = b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
		tn.Logo, tn.AccentColor, tn.DefaultLanguage = []byte{}, "", ""
		return nil
	})
	require.NoError(t, err)
	got, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Empty(t, got.Logo)
	assert.Empty(t, got.LogoType)
	assert.Zero(t, got.LogoHash)
	assert.Empty(t, got.AccentColor)
	assert.Empty(t, got.DefaultLanguage)
	assert.Equal(t, "Tenant "+acme, got.DisplayName)
}

// Update: ErrNotFound if the tenant does not exist; fn is not called.
func testTenantUpdateNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	called := false
	_, err := b.Tenants.Update(ctx(), globex, func(*store.Tenant) error { called = true; return nil })
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.False(t, called, "fn called for a missing tenant")
	require.NoError(t, b.Tenants.Delete(ctx(), acme))
	_, err = b.Tenants.Update(ctx(), acme, func(*store.Tenant) error { return nil })
	require.ErrorIs(t, err, store.ErrNotFound, "Update after Delete")
}

// Update: ErrInvalid if fn changed the id or left a value CheckTenant refuses; nothing is
// stored.
func testTenantUpdateInvalid(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	_, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
		tn.Logo, tn.AccentColor, tn.DefaultLanguage = testPNG(t, 4), "#1d5bb8", "de"
		tn.SecondFactor = store.SecondFactorPictureOrPasskey
		return nil
	})
	require.NoError(t, err)
	before, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	for name, fn := range map[string]func(*store.Tenant){
		"id changed":       func(tn *store.Tenant) { tn.ID = globex },
		"contrast too low": func(tn *store.Tenant) { tn.AccentColor = "#7a8a9a" },
		"white accent":     func(tn *store.Tenant) { tn.AccentColor = "#ffffff" },
		"short colour":     func(tn *store.Tenant) { tn.AccentColor = "#fff" },
		"named colour":     func(tn *store.Tenant) { tn.AccentColor = "navy" },
		"logo too large":   func(tn *store.Tenant) { tn.Logo = append(testPNG(t, 5), make([]byte, store.MaxLogoSize)...) },
		"logo a GIF":       func(tn *store.Tenant) { tn.Logo = []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;") },
		"logo HTML":        func(tn *store.Tenant) { tn.Logo = []byte("<html><script>alert(1)</script></html>") },
		"SVG with a script": func(tn *store.Tenant) {
			tn.Logo = []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
		},
		"SVG with onload": func(tn *store.Tenant) {
			tn.Logo = []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`)
		},
		"truncated PNG":      func(tn *store.Tenant) { tn.Logo = testPNG(t, 6)[:20] },
		"language not a tag": func(tn *store.Tenant) { tn.DefaultLanguage = "english please" },
		"language und":       func(tn *store.Tenant) { tn.DefaultLanguage = "und" },
		"name too long":      func(tn *store.Tenant) { tn.DisplayName = strings.Repeat("é", store.MaxDisplayNameLength+1) },
		"name with newline":  func(tn *store.Tenant) { tn.DisplayName = "Acme\nCorp" },
		"policy unknown":     func(tn *store.Tenant) { tn.SecondFactor = "passkey-only" },
		"policy with space":  func(tn *store.Tenant) { tn.SecondFactor = "picture " },
	} {
		_, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
			tn.DisplayName = "changed"
			fn(tn)
			return nil
		})
		assert.ErrorIs(t, err, store.ErrInvalid, name)
	}
	after, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, lookOf(*before), lookOf(*after), "a refused Update stores nothing")
	_, err = b.Tenants.Get(ctx(), globex)
	require.ErrorIs(t, err, store.ErrNotFound, "an Update cannot make another tenant")
}

// Update: an error of fn is returned as it is, and nothing is stored.
func testTenantUpdateFuncError(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	boom := errors.New("boom")
	_, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
		tn.DisplayName, tn.AccentColor = "changed", "#000000"
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, "Tenant "+acme, got.DisplayName)
	assert.Empty(t, got.AccentColor)
}

// The logo a caller gives or gets shares no memory with the store.
func testTenantUpdateSharesNoMemory(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	logo := testPNG(t, 7)
	want := bytes.Clone(logo)
	got, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error { tn.Logo = logo; return nil })
	require.NoError(t, err)
	logo[len(logo)-1] ^= 0xff
	got.Logo[len(got.Logo)-1] ^= 0xff
	read, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, want, read.Logo)
	read.Logo[len(read.Logo)-1] ^= 0xff
	again, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, want, again.Logo)
}

// Of concurrent Updates none is lost.
func testTenantConcurrentUpdates(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	_, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error { tn.DisplayName = ""; return nil })
	require.NoError(t, err)
	const n = 12
	errs := parallel(n, func(int) error {
		_, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
			tn.DisplayName += "x"
			return nil
		})
		return err
	})
	for i, err := range errs {
		require.NoError(t, err, "update %d", i)
	}
	got, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("x", n), got.DisplayName)
}

// Update changes the tenant, not what it holds: its users stay.
func testTenantUpdateKeepsUsers(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	_, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error { tn.DisplayName = "Acme"; return nil })
	require.NoError(t, err)
	assert.Equal(t, ann.ID, mustGetUser(t, b, acme, ann.ID).ID)
}

// List leaves the logos' bytes out (Logo nil) and keeps their type and hash; Get has them.
func testTenantListLeavesLogosOut(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	logo := testPNG(t, 10)
	_, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error { tn.Logo = logo; return nil })
	require.NoError(t, err)
	ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Nil(t, ts[0].Logo)
	assert.Equal(t, store.LogoPNG, ts[0].LogoType)
	assert.Equal(t, sha256.Sum256(logo), ts[0].LogoHash)
	got, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, logo, got.Logo)
	// An Update of a listed tenant (as a caller might write one back) is no change to the logo
	// only when fn leaves Logo alone: Update starts from the stored tenant, logo included.
	_, err = b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error { tn.DisplayName = "Acme"; return nil })
	require.NoError(t, err)
	got, err = b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, logo, got.Logo)
}

// The second-factor policy: "" and SecondFactorPicture are stored as "" (the picture password
// only); SecondFactorPictureOrPasskey is kept by Create, Get, List and Updates that change other
// values, until an Update sets it back.
func testTenantSecondFactor(t *testing.T, b store.Backend) {
	require.NoError(t, b.Tenants.Create(ctx(), store.Tenant{ID: acme, SecondFactor: store.SecondFactorPicture}))
	mustTenant(t, b, globex)
	got, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Empty(t, got.SecondFactor, "SecondFactorPicture is stored as \"\"")
	assert.False(t, got.PasskeysAllowed())

	// policy returns the policy of acme as Get and List read it.
	policy := func(msg string) (string, string) {
		t.Helper()
		got, err := b.Tenants.Get(ctx(), acme)
		require.NoError(t, err, msg)
		ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
		require.NoError(t, err, msg)
		require.Len(t, ts, 2, msg)
		assert.Empty(t, ts[1].SecondFactor, "%s: the other tenant's policy", msg)
		return got.SecondFactor, ts[0].SecondFactor
	}

	upd, err := b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
		tn.SecondFactor = store.SecondFactorPictureOrPasskey
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, store.SecondFactorPictureOrPasskey, upd.SecondFactor, "Update's result")
	assert.True(t, upd.PasskeysAllowed())
	gotPolicy, listed := policy("after the Update that allows passkeys")
	assert.Equal(t, store.SecondFactorPictureOrPasskey, gotPolicy)
	assert.Equal(t, store.SecondFactorPictureOrPasskey, listed)

	_, err = b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
		tn.DisplayName, tn.AccentColor = "Acme", "#0b5d3b"
		return nil
	})
	require.NoError(t, err)
	gotPolicy, listed = policy("after an Update of other values")
	assert.Equal(t, store.SecondFactorPictureOrPasskey, gotPolicy)
	assert.Equal(t, store.SecondFactorPictureOrPasskey, listed)

	upd, err = b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error {
		tn.SecondFactor = store.SecondFactorPicture
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, upd.SecondFactor, "Update's result: SecondFactorPicture in canonical form")
	gotPolicy, listed = policy("after the Update back to the picture")
	assert.Empty(t, gotPolicy)
	assert.Empty(t, listed)
	got, err = b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, "#0b5d3b", got.AccentColor, "the rest of the tenant is kept")
}
