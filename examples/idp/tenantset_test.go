package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/store"
)

// writePNG writes a small PNG logo to a file of its own and returns its path and bytes.
func writePNG(t *testing.T) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 8, 4))))
	name := filepath.Join(t.TempDir(), "logo.png")
	require.NoError(t, os.WriteFile(name, buf.Bytes(), 0o600))
	return name, buf.Bytes()
}

// TestTenantSet: tenant set changes each value of the look it is given and keeps the others;
// tenant list shows the look; "" resets a value; each change is a tenant.updated event.
func TestTenantSet(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "--name", "Acme", "-db", db)
	logo, data := writePNG(t)

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"tenant", "set", "--tenant", "acme", "--display-name", "Acme Corp. – Zürich",
		"--logo", logo, "--accent-color", "#0B5D3B", "--default-language", "de-ch", "-db", db}, &out, io.Discard))
	assert.Regexp(t, `^tenant=acme name="Acme Corp. – Zürich" created=\S+ logo=image/png accent_color=#0b5d3b default_language=de-CH\n$`, out.String())

	// One flag changes one value.
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"tenant", "set", "--tenant", "acme", "--accent-color", "#1d5bb8", "-db", db}, &out, io.Discard))
	assert.Contains(t, out.String(), `name="Acme Corp. – Zürich"`)
	assert.Contains(t, out.String(), " logo=image/png accent_color=")
	assert.Contains(t, out.String(), " accent_color=#1d5bb8 default_language=de-CH\n")

	runCmd(t, "tenant", "create", "globex", "-db", db)
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"tenant", "list", "-db", db}, &out, io.Discard))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	assert.Regexp(t, `^tenant=acme name="Acme Corp. – Zürich" created=\S+ logo=image/png accent_color=#1d5bb8 default_language=de-CH$`, lines[0])
	assert.Regexp(t, `^tenant=globex name="" created=\S+$`, lines[1], "a tenant without a look has the line it had")

	// "" resets a value to visid's.
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"tenant", "set", "--tenant", "acme", "--logo", "", "--accent-color=", "-db", db}, &out, io.Discard))
	assert.Regexp(t, `^tenant=acme name="Acme Corp. – Zürich" created=\S+ default_language=de-CH\n$`, out.String())

	d, err := openDB(t.Context(), db)
	require.NoError(t, err)
	tn, err := d.Tenants.Get(t.Context(), "acme")
	require.NoError(t, err)
	assert.Empty(t, tn.Logo)
	assert.Empty(t, tn.AccentColor)
	events, err := d.Events.List(t.Context(), "acme", "", 10)
	require.NoError(t, err)
	require.NoError(t, d.close())

	require.Len(t, events, 3)
	sum := sha256.Sum256(data)
	for i, changed := range [][]any{{"display_name", "logo", "accent_color", "default_language"}, {"accent_color"}, {"logo", "accent_color"}} {
		e := events[i]
		assert.Equal(t, store.EventTenantUpdated, e.Type)
		assert.Equal(t, "admin", e.Actor)
		assert.Equal(t, store.SubjectTenant, e.SubjectKind)
		assert.Equal(t, "acme", e.SubjectID)
		var m map[string]any
		require.NoError(t, json.Unmarshal(e.Data, &m))
		assert.Equal(t, changed, m["changed"], "event %d", i)
	}
	var first map[string]any
	require.NoError(t, json.Unmarshal(events[0].Data, &first))
	assert.Equal(t, hex.EncodeToString(sum[:]), first["logo_sha256"])
	assert.NotContains(t, string(events[0].Data), string(data[8:20]), "never the logo's bytes")
}

// TestTenantSetErrors: bad values are refused with an error that names the flag, before the
// store is touched; nothing changes.
func TestTenantSetErrors(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "--name", "Acme", "-db", db)
	dir := t.TempDir()
	gif := filepath.Join(dir, "logo.gif")
	require.NoError(t, os.WriteFile(gif, []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), 0o600))
	big := filepath.Join(dir, "big.png")
	require.NoError(t, os.WriteFile(big, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, store.MaxLogoSize)...), 0o600))
	svg := filepath.Join(dir, "evil.svg")
	require.NoError(t, os.WriteFile(svg, []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), 0o600))

	for _, tt := range []struct {
		args  []string
		want  []string
		usage bool
	}{
		{[]string{"--tenant", "acme"}, []string{"at least one of --display-name, --logo, --accent-color, --default-language and --passkeys"}, true},
		{[]string{"--accent-color", "#000000"}, []string{"tenant set needs --tenant"}, true},
		{[]string{"--tenant", "Acme!", "--accent-color", "#000000"}, []string{`--tenant "Acme!" is not a tenant id`}, true},
		{[]string{"--tenant", "acme", "extra", "--accent-color", "#000000"}, []string{`unexpected argument "extra"`}, true},
		{[]string{"--tenant", "acme", "--accent-color", "#7a8a9a"},
			[]string{"--accent-color: accent colour #7a8a9a has a contrast ratio of 3.", "page background (#f4f6f8)", "at least 4.5:1"}, true},
		{[]string{"--tenant", "acme", "--accent-color", "#ffffff"}, []string{"--accent-color:", "1.08:1", "4.5:1"}, true},
		{[]string{"--tenant", "acme", "--accent-color", "green"}, []string{"--accent-color:", "#RRGGBB"}, true},
		{[]string{"--tenant", "acme", "--default-language", "klingon please"}, []string{"--default-language:", "BCP 47"}, true},
		{[]string{"--tenant", "acme", "--display-name", strings.Repeat("x", 101)}, []string{"--display-name:", "at most 100"}, true},
		{[]string{"--tenant", "acme", "--logo", gif}, []string{"--logo:", "not a PNG, JPEG, WebP or SVG"}, true},
		{[]string{"--tenant", "acme", "--logo", big}, []string{"--logo " + big + ":", "larger than 256 KiB"}, true},
		{[]string{"--tenant", "acme", "--logo", svg}, []string{"--logo:", `element "script" is not allowed`}, true},
		{[]string{"--tenant", "acme", "--logo", filepath.Join(dir, "missing.png")}, []string{"--logo ", "no such file"}, true},
		{[]string{"--tenant", "acme", "--accent-color", "#eeeeee", "--default-language", "?"}, []string{"--accent-color:", "--default-language:"}, true},
		{[]string{"--tenant", "acme", "--passkeys", "yes"}, []string{`--passkeys "yes": want allowed or off`}, true},
		{[]string{"--tenant", "acme", "--passkeys", ""}, []string{`--passkeys "": want allowed or off`}, true},
		{[]string{"--tenant", "nosuch", "--accent-color", "#000000"}, []string{`there is no tenant "nosuch"`}, false},
	} {
		var out, errOut bytes.Buffer
		err := run(t.Context(), append([]string{"tenant", "set", "-db", db}, tt.args...), &out, &errOut)
		require.Error(t, err, "%q", tt.args)
		for _, w := range tt.want {
			assert.Contains(t, err.Error(), w, "%q", tt.args)
		}
		var ue *cli.UsageError
		assert.Equal(t, tt.usage, errors.As(err, &ue), "%q: a usage error", tt.args)
		assert.Empty(t, out.String())
	}
	list := runCmd(t, "tenant", "list", "-db", db)
	assert.Regexp(t, `^acme name="Acme" created=\S+$`, list["tenant"], "nothing was changed")
}

// TestTenantSetPasskeys: --passkeys allowed gives the tenant the picture-or-passkey policy,
// which tenant set and tenant list show; --passkeys off gives it back the picture password
// alone; each change is a tenant.updated event naming second_factor. The other tenant and the
// tenant's look are left as they were.
func TestTenantSetPasskeys(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "--name", "Acme", "-db", db)
	runCmd(t, "tenant", "create", "globex", "-db", db)
	runCmd(t, "tenant", "set", "--tenant", "acme", "--accent-color", "#0b5d3b", "-db", db)

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"tenant", "set", "--tenant", "acme", "--passkeys", "allowed", "-db", db}, &out, io.Discard))
	assert.Regexp(t, `^tenant=acme name="Acme" created=\S+ accent_color=#0b5d3b second_factor=picture-or-passkey\n$`, out.String())
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"tenant", "list", "-db", db}, &out, io.Discard))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	assert.Regexp(t, `^tenant=acme name="Acme" created=\S+ accent_color=#0b5d3b second_factor=picture-or-passkey$`, lines[0])
	assert.Regexp(t, `^tenant=globex name="" created=\S+$`, lines[1], "the other tenant keeps the picture password alone")
	tn := getTenant(t, db, "acme")
	assert.Equal(t, store.SecondFactorPictureOrPasskey, tn.SecondFactor)
	assert.True(t, tn.PasskeysAllowed())

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"tenant", "set", "--tenant", "acme", "--passkeys=off", "-db", db}, &out, io.Discard))
	assert.Regexp(t, `^tenant=acme name="Acme" created=\S+ accent_color=#0b5d3b\n$`, out.String())
	tn = getTenant(t, db, "acme")
	assert.Empty(t, tn.SecondFactor)
	assert.False(t, tn.PasskeysAllowed())
	assert.Equal(t, "#0b5d3b", tn.AccentColor)

	// off again changes nothing: no event.
	runCmd(t, "tenant", "set", "--tenant", "acme", "--passkeys", "off", "-db", db)

	d, err := openDB(t.Context(), db)
	require.NoError(t, err)
	events, err := d.Events.List(t.Context(), "acme", "", 10)
	require.NoError(t, err)
	require.NoError(t, d.close())
	require.Len(t, events, 3, "the accent colour, allowed, off")
	for i, policy := range []string{"picture-or-passkey", "picture"} {
		e := events[i+1]
		assert.Equal(t, store.EventTenantUpdated, e.Type)
		assert.Equal(t, "admin", e.Actor)
		assert.Equal(t, store.SubjectTenant, e.SubjectKind)
		assert.Equal(t, "acme", e.SubjectID)
		var m map[string]any
		require.NoError(t, json.Unmarshal(e.Data, &m))
		assert.Equal(t, []any{"second_factor"}, m["changed"], "event %d", i+1)
		assert.Equal(t, policy, m["second_factor"], "event %d", i+1)
	}
}

// TestTenantSetPasskeysBadValue: a --passkeys value other than allowed and off is one line that
// names both, exit status 2, before the store is opened; the tenant is unchanged.
func TestTenantSetPasskeysBadValue(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	for _, v := range []string{"on", "Allowed", "picture-or-passkey", "true"} {
		var out, errOut bytes.Buffer
		err := run(t.Context(), []string{"tenant", "set", "--tenant", "acme", "--passkeys", v, "-db", db}, &out, &errOut)
		var ue *cli.UsageError
		require.ErrorAs(t, err, &ue, v)
		assert.Empty(t, out.String())
		var stderr bytes.Buffer
		assert.Equal(t, 2, exitCode(err, &stderr), v)
		first, rest, _ := strings.Cut(stderr.String(), "\n")
		assert.Equal(t, `idp: --passkeys "`+v+`": want allowed or off`, first)
		assert.Equal(t, "Run \"idp help\" for usage.\n", rest)
	}
	assert.Empty(t, getTenant(t, db, "acme").SecondFactor, "nothing was changed")
}

// getTenant reads tenant id from the store db.
func getTenant(t *testing.T, db, id string) *store.Tenant {
	t.Helper()
	d, err := openDB(t.Context(), db)
	require.NoError(t, err)
	defer d.close()
	tn, err := d.Tenants.Get(t.Context(), id)
	require.NoError(t, err)
	return tn
}

// TestTenantSetHelp: tenant set is in the usage and in the tenant group's subcommands.
func TestTenantSetHelp(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"tenant", "set", "-h"}, &out, io.Discard))
	assert.Equal(t, usage, out.String())
	assert.Contains(t, usage, "idp tenant set --tenant T [--display-name N] [--logo FILE] [--accent-color #RRGGBB]")
	assert.Contains(t, usage, "[--passkeys allowed|off]")
	err := run(t.Context(), []string{"tenant", "paint"}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "create, list, set")
}

// TestTenantCreateNameChecked: tenant create refuses a display name the store would refuse,
// naming --name.
func TestTenantCreateNameChecked(t *testing.T) {
	err := run(t.Context(), []string{"tenant", "create", "acme", "--name", "Acme\nCorp", "-db", newStore(t)}, io.Discard, io.Discard)
	var ue *cli.UsageError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "--name: display name contains a control character", ue.Msg)
}

// TestServeTenantLook: what tenant set gives a tenant shows on the service's pages: the
// enrollment link's page has the logo, which the service serves, and the accent colour.
func TestServeTenantLook(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	s := startService(t, "-db", db)
	logo, data := writePNG(t)
	runCmd(t, "tenant", "set", "--tenant", "demo", "--display-name", "Acme Corp", "--logo", logo, "--accent-color", "#0b5d3b", "-db", db)
	issuer, err := url.Parse(s.vars["issuer"])
	require.NoError(t, err)
	base := issuer.Scheme + "://" + issuer.Host
	link := runCmd(t, "enroll-link", "--tenant", "demo", "--user", "alice", "--base-url", base, "-db", db)["enrollment_url"]
	require.NotEmpty(t, link)

	resp, err := http.Get(link)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	m := regexp.MustCompile(`<img class="tenant-logo" src="([^"]+)" alt="Acme Corp">`).FindSubmatch(body)
	require.NotNil(t, m, "the page shows the logo:\n%s", body)
	assert.Contains(t, string(body), "--accent:#0b5d3b")

	resp, err = http.Get(base + string(m[1]))
	require.NoError(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "image/png", resp.Header.Get("Content-Type"))
	assert.Equal(t, data, got)
}
