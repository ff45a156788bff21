package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// The accessibility tests run axe-core (npm package axe-core) in Chromium on every page of the
// sign-in, enrollment and error flows, visid's and the app's, at a desktop's and a phone's size,
// and fail on any violation. VISID_AXE_JS is the path of axe.min.js; .ci/run installs it with
//
//	npm install --prefix "$(mktemp -d)" axe-core
//
// Without it (or without a browser) the tests skip, unless VISID_REQUIRE_BROWSER=1.

// a11yTimeout bounds each accessibility test: axe takes seconds per page on a busy machine.
const a11yTimeout = 5 * time.Minute

// axeDesktop is a laptop's screen.
var axeDesktop = viewport{name: "desktop", width: 1280, height: 800}

// axeSource returns the text of axe.min.js named by VISID_AXE_JS.
func axeSource(t *testing.T) string {
	t.Helper()
	path := os.Getenv("VISID_AXE_JS")
	if path == "" {
		if os.Getenv("VISID_REQUIRE_BROWSER") == "1" {
			t.Fatal("VISID_AXE_JS is not set, and VISID_REQUIRE_BROWSER=1: npm install --prefix DIR axe-core, then VISID_AXE_JS=DIR/node_modules/axe-core/axe.min.js")
		}
		t.Skip("VISID_AXE_JS is not set (npm install --prefix DIR axe-core, then VISID_AXE_JS=DIR/node_modules/axe-core/axe.min.js); VISID_REQUIRE_BROWSER=1 makes this a failure")
	}
	src, err := os.ReadFile(path)
	require.NoError(t, err, "VISID_AXE_JS")
	return string(src)
}

// axeViolation is one rule that a page breaks, with the elements that break it.
type axeViolation struct {
	ID      string `json:"id"`
	Impact  string `json:"impact"`
	Help    string `json:"help"`
	HelpURL string `json:"helpUrl"`
	Nodes   []struct {
		Target  []any  `json:"target"`
		HTML    string `json:"html"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

// axeRun runs every rule of axe-core that is on by default on the page the browser shows (axe
// is injected over the DevTools protocol, so the page's Content-Security-Policy does not stop
// it) and returns the violations.
func axeRun(c *chrome, axe string) []axeViolation {
	c.t.Helper()
	if !eval[bool](c, `typeof window.axe === "object"`) {
		c.do(chromedp.Evaluate[chromedp.Void](axe))
	}
	out, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`,
		chromedp.EvalAwaitPromise))
	require.NoError(c.t, err, "running axe\n%s", c.where())
	var vs []axeViolation
	require.NoError(c.t, json.Unmarshal([]byte(out), &vs))
	return vs
}

// checkA11y fails the test, naming the page what, when axe finds a violation on the page the
// browser shows.
func (c *chrome) checkA11y(axe, what string) {
	c.t.Helper()
	start := time.Now()
	vs := axeRun(c, axe)
	c.t.Logf("axe: %s: %d violations in %s", what, len(vs), time.Since(start).Round(time.Millisecond))
	if !strings.HasPrefix(what, "the app's") {
		c.checkLanguage(what)
	}
	if len(vs) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %dx%d): %d accessibility violations\n", what, eval[string](c, `location.pathname`),
		c.vp.width, c.vp.height, len(vs))
	for _, v := range vs {
		fmt.Fprintf(&b, "  %s (%s): %s\n    %s\n", v.ID, v.Impact, v.Help, v.HelpURL)
		for _, n := range v.Nodes {
			fmt.Fprintf(&b, "    - %v %s\n      %s\n", n.Target, n.HTML, strings.ReplaceAll(n.Summary, "\n", "\n      "))
		}
	}
	c.t.Error(b.String())
}

// enrollPoints places the points of step 2 of an enrollment, after which step 3 counts from 0.
func (c *chrome) enrollPoints(points []picture.Point) {
	c.t.Helper()
	c.clickPoints(points[:len(points)-1])
	c.clickPoint(points[len(points)-1])
	c.waitFor("step 3", `!document.getElementById("step-confirm").hidden`)
	c.waitText("#count", visidText(c.vp, "script.count.other", "placed", "0", "n", strconv.Itoa(len(points))))
}

// TestBrowserAccessibility runs axe on each page a person sees, in each state that shows
// something new, at a desktop's and a phone's size in English, and once in each other language
// of visid's pages, at one size or the other: there visid's pages must also say their language
// and show no English.
func TestBrowserAccessibility(t *testing.T) {
	axe := axeSource(t)
	in := func(vp viewport, lang string) viewport {
		vp.name, vp.lang = vp.name+"-"+lang, lang
		return vp
	}
	for _, vp := range []viewport{axeDesktop, phone, in(phone, "de"), in(axeDesktop, "ja"), in(phone, "fr"), in(axeDesktop, "es")} {
		t.Run(vp.name, func(t *testing.T) {
			t.Run("sign-in", func(t *testing.T) { a11ySignIn(t, axe, vp) })
			t.Run("enrollment", func(t *testing.T) { a11yEnrollment(t, axe, vp) })
			t.Run("errors", func(t *testing.T) { a11yErrors(t, axe, vp) })
			t.Run("tenant look", func(t *testing.T) { a11yTenantLook(t, axe, vp) })
			t.Run("passkeys", func(t *testing.T) { a11yPasskeys(t, axe, vp) })
		})
	}
}

// a11ySignIn: the app's password form (also with a mistake), visid's picture login (fresh,
// after a wrong attempt, with every point placed), the app's signed-in page, and the app's page
// after a cancelled second factor.
func a11ySignIn(t *testing.T, axe string, vp viewport) {
	exe := findBrowser(t)
	s := newPictureStack(t)
	c := newChromeFor(t, exe, vp, a11yTimeout)

	c.open(s.app.url+"/", `input[name="email"]`)
	c.checkA11y(axe, "the app's sign-in form")
	c.passwordForm(demoEmail, "wrong password", actionSignIn, "p.error")
	c.checkA11y(axe, "the app's sign-in form after a wrong password")

	c.signIn(s.app, demoEmail, demoPassword)
	c.checkA11y(axe, "visid's picture login")
	if vp.phone {
		// The keyboard instructions are not shown above the picture until the picture has
		// keyboard focus; the picture's description has them all the time.
		assert.Equal(t, "instructions keyboard-help", eval[string](c, `document.getElementById("frame").getAttribute("aria-describedby")`))
		assert.LessOrEqual(t, eval[float64](c, `document.getElementById("keyboard-help").getBoundingClientRect().height`), 1.0,
			"no keyboard instructions above the picture on a phone")
	}
	c.clickPoints(wrongPoints())
	c.checkA11y(axe, "visid's picture login with every point placed")
	c.press("#submit", "p.message")
	c.waitFor("the picture", fmt.Sprintf(pictureLoaded, "/image"))
	c.checkA11y(axe, "visid's picture login after a wrong attempt")
	if vp.phone {
		c.do(chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
		c.tabTo("frame", 12)
		assert.Greater(t, eval[float64](c, `document.getElementById("keyboard-help").getBoundingClientRect().height`), 20.0,
			"the keyboard instructions show while the picture has keyboard focus")
		c.checkA11y(axe, "visid's picture login with the keyboard instructions shown")
		c.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
	}
	c.clickPoints(alicePoints)
	c.press("#submit", "p.hint")
	require.Equal(t, "alice@example.com passed both factors", c.appHeading())
	c.checkA11y(axe, "the app's signed-in page")

	c.press(`form[action="/logout"] button`, `input[name="email"]`)
	c.signIn(s.app, demoEmail, demoPassword)
	c.press("#cancel", "p.hint")
	c.checkA11y(axe, "the app's page after a cancelled second factor")
}

// a11yEnrollment: a change of picture password from the app: visid's link page, the three steps
// of the enrollment, and the app's page after it.
func a11yEnrollment(t *testing.T, axe string, vp viewport) {
	exe := findBrowser(t)
	s := newPictureStack(t)
	c := newChromeFor(t, exe, vp, a11yTimeout)
	images := picture.BuiltinImages()
	points := []picture.Point{{X: 150, Y: 120}, {X: 820, Y: 140}, {X: 500, Y: 380}, {X: 180, Y: 620}, {X: 840, Y: 600}}

	c.open(s.app.url+"/", `input[name="email"]`)
	c.passwordForm(demoEmail, demoPassword, actionEnroll, `a[href="/"]`)
	c.checkA11y(axe, "the app's page refusing to replace a picture password")

	c.signIn(s.app, demoEmail, demoPassword)
	c.clickPoints(alicePoints)
	c.press("#submit", "p.hint")
	c.press(`form[action="/picture"] button`, "#login-form #picture")
	c.waitFor("the picture", fmt.Sprintf(pictureLoaded, "/image"))
	c.clickPoints(alicePoints)
	c.press("#submit", "#continue")
	c.checkA11y(axe, "visid's enrollment link page")

	c.press("#continue", "#enroll-form")
	c.checkA11y(axe, "step 1 of the enrollment")
	c.do(chromedp.Click(chromedp.CSS("#image-" + images[1].Name)))
	c.do(chromedp.WaitEnabled(chromedp.CSS("#choose")), chromedp.Click(chromedp.CSS("#choose")))
	c.do(chromedp.WaitVisible(chromedp.CSS("#workspace")))
	c.waitFor("the chosen picture", fmt.Sprintf(pictureLoaded, "/image/"+images[1].Name))
	c.checkA11y(axe, "step 2 of the enrollment")
	c.enrollPoints(points)
	c.checkA11y(axe, "step 3 of the enrollment")
	c.clickPoints(points)
	c.checkA11y(axe, "step 3 of the enrollment, every point confirmed")
	c.press("#submit", "p.hint")
	assert.Equal(t, "Your picture password is set up", c.text("h1"), "the app's page")
	c.checkA11y(axe, "the app's page after the enrollment")
}

// a11yErrors: visid's error page, and an administrator's enrollment link: the page after it, a
// cancelled one, and one used twice.
func a11yErrors(t *testing.T, axe string, vp viewport) {
	exe := findBrowser(t)
	s := newPictureStack(t)
	c := newChromeFor(t, exe, vp, a11yTimeout)
	points := []picture.Point{{X: 150, Y: 120}, {X: 820, Y: 140}, {X: 500, Y: 380}, {X: 180, Y: 620}, {X: 840, Y: 600}}

	c.open(s.v.srv.URL+"/oidc/login/demo/"+strings.Repeat("a", 43), "h1")
	assert.Equal(t, visidText(vp, "error.title.signin"), c.text("h1"))
	assert.Equal(t, visidText(vp, "error.support")+" invalid_request", c.text(".support"))
	c.checkA11y(axe, "visid's error page")

	link := func() string {
		l, err := oidc2fa.NewEnrollmentLink(t.Context(), s.cfg, oidc2fa.EnrollmentRequest{Tenant: "demo", User: s.alice.ID})
		require.NoError(t, err)
		return l.URL
	}
	first := link()
	c.open(first, "#continue")
	c.press("#continue", "#enroll-form")
	c.do(chromedp.Click(chromedp.CSS("#image-harbour")))
	c.do(chromedp.WaitEnabled(chromedp.CSS("#choose")), chromedp.Click(chromedp.CSS("#choose")))
	c.do(chromedp.WaitVisible(chromedp.CSS("#workspace")))
	c.waitFor("the picture", fmt.Sprintf(pictureLoaded, "/image/harbour"))
	c.enrollPoints(points)
	c.clickPoints(points)
	c.press("#submit", "p.lead")
	assert.Equal(t, visidText(vp, "done.title"), c.text("h1"))
	assert.Equal(t, "rgb(244, 246, 248)", eval[string](c, `getComputedStyle(document.body).backgroundColor`),
		"the page has its style sheet")
	c.checkA11y(axe, "visid's page after an administrator's enrollment link")

	c.open(first, "h1")
	assert.Equal(t, visidText(vp, "error.title.enrollment"), c.text("h1"))
	c.checkA11y(axe, "visid's page for a used enrollment link")

	c.open(link(), "#continue")
	c.press("#continue", "#enroll-form")
	c.press("#cancel", ".support")
	assert.Equal(t, visidText(vp, "error.title.cancelled"), c.text("h1"))
	c.checkA11y(axe, "visid's page after a cancelled enrollment")
}

// tenantLogo is a 240×64 PNG: a dark green band with a white square, a logo as a tenant might
// upload it.
func tenantLogo(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 240, 64))
	for y := range 64 {
		for x := range 240 {
			c := color.RGBA{11, 93, 59, 255}
			if x > 16 && x < 48 && y > 16 && y < 48 {
				c = color.RGBA{255, 255, 255, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

// a11yTenantLook: the picture login, an administrator's enrollment link page and the
// enrollment's first step, for a tenant with its own name, logo and accent colour. The logo
// loads from visid (under the pages' policy) and the accent colour is the buttons'.
func a11yTenantLook(t *testing.T, axe string, vp viewport) {
	exe := findBrowser(t)
	s := newPictureStack(t)
	_, err := s.cfg.Tenants.Update(t.Context(), "demo", func(tn *store.Tenant) error {
		tn.DisplayName, tn.Logo, tn.AccentColor = "Acme Corp", tenantLogo(t), "#0b5d3b"
		return nil
	})
	require.NoError(t, err)
	c := newChromeFor(t, exe, vp, a11yTimeout)
	logoLoaded := `(() => { const i = document.querySelector("img.tenant-logo"); return !!i && i.complete && i.naturalWidth === 240 })()`
	accent := `getComputedStyle(document.querySelector(".button.primary")).backgroundColor`

	c.signIn(s.app, demoEmail, demoPassword)
	c.waitFor("the tenant's logo", logoLoaded)
	assert.Equal(t, "Acme Corp", eval[string](c, `document.querySelector("img.tenant-logo").alt`))
	assert.Equal(t, "rgb(11, 93, 59)", eval[string](c, accent), "the buttons have the tenant's colour")
	c.checkA11y(axe, "visid's picture login in the tenant's look")

	l, err := oidc2fa.NewEnrollmentLink(t.Context(), s.cfg, oidc2fa.EnrollmentRequest{Tenant: "demo", User: s.alice.ID})
	require.NoError(t, err)
	c.open(l.URL, "#continue")
	c.waitFor("the tenant's logo", logoLoaded)
	assert.Equal(t, "rgb(11, 93, 59)", eval[string](c, accent))
	c.checkA11y(axe, "visid's enrollment link page in the tenant's look")
	c.press("#continue", "#enroll-form")
	c.waitFor("the tenant's logo", logoLoaded)
	c.checkA11y(axe, "step 1 of the enrollment in the tenant's look")
}

// a11yPasskeys: for a tenant that allows passkeys, an administrator's enrollment link (its page,
// the enrollment offering "Add a passkey", the page after it), and visid's login offering "Use a
// passkey" above the picture; in English also the states passkey.js shows (waiting for the
// authenticator, after the authenticator refused) and the login offering the passkey alone, to
// a user with no picture password. The other languages skip those, which take two more
// sign-ins: their sentences are on the login page checked before (the notices in the scripts'
// text, #picture-text). With VISID_SCREENSHOT_DIR set, the pages' screenshots go there.
func a11yPasskeys(t *testing.T, axe string, vp viewport) {
	exe := findBrowser(t)
	s := newPasskeyStack(t)
	c := newChromeFor(t, exe, vp, a11yTimeout)
	device := c.addAuthenticator(false)
	shots := os.Getenv("VISID_SCREENSHOT_DIR")
	shoot := func(name string) {
		if shots != "" {
			c.screenshot(shots, "passkey-"+name+"-"+vp.name+".png")
		}
	}

	l, err := oidc2fa.NewEnrollmentLink(t.Context(), s.cfg, oidc2fa.EnrollmentRequest{Tenant: "demo", User: s.alice.ID})
	require.NoError(t, err)
	c.open(l.URL, "#continue")
	c.checkA11y(axe, "visid's enrollment link page of a tenant with passkeys")
	c.press("#continue", "#enroll-form")
	assert.Equal(t, visidText(vp, "enroll.title.passkey"), c.text("h1"))
	c.checkA11y(axe, "the enrollment offering a passkey")
	shoot("enroll")
	c.press("#passkey-start", "p.lead")
	assert.Equal(t, visidText(vp, "passkey.done.title"), c.text("h1"))
	c.checkA11y(axe, "visid's page after an administrator's passkey enrollment")
	shoot("done")

	c.passkeySignIn(s.app, demoEmail, demoPassword)
	c.waitFor("the picture", fmt.Sprintf(pictureLoaded, "/image"))
	c.checkA11y(axe, "visid's login offering a passkey")
	shoot("login")
	if vp.lang != "" {
		return
	}

	// The authenticator is not touched: the browser waits, and the page says so.
	presence := func(on bool) {
		_, err := chromedp.Call(c.ctx, webauthn.SetAutomaticPresenceSimulation,
			webauthn.SetAutomaticPresenceSimulationParams{AuthenticatorID: device, Enabled: on})
		require.NoError(t, err)
	}
	presence(false)
	c.do(chromedp.Click(chromedp.CSS("#passkey-start")))
	c.waitText("#passkey-notice", visidText(vp, "script.passkeyWaiting"))
	assert.Equal(t, "true", eval[string](c, `document.getElementById("passkey-start").getAttribute("aria-disabled")`),
		"one ceremony at a time")
	assert.Equal(t, "passkey-start", c.activeID(), "the busy button keeps the focus")
	c.checkA11y(axe, "visid's login waiting for the passkey")
	shoot("login-waiting")

	// The authenticator cannot verify the user: the browser gives up, and the page says the
	// passkey was not used.
	c.passkeySignIn(s.app, demoEmail, demoPassword)
	presence(true)
	_, err = chromedp.Call(c.ctx, webauthn.SetUserVerified, webauthn.SetUserVerifiedParams{AuthenticatorID: device, IsUserVerified: false})
	require.NoError(t, err)
	c.do(chromedp.Click(chromedp.CSS("#passkey-start")))
	c.waitText("#passkey-notice", visidText(vp, "script.passkeyCancelled"))
	c.waitFor("the button again", `!document.getElementById("passkey-start").hasAttribute("aria-disabled") && document.activeElement.id === "passkey-start"`)
	c.checkA11y(axe, "visid's login after the passkey was not used")
	shoot("login-cancelled")
	_, err = chromedp.Call(c.ctx, webauthn.SetUserVerified, webauthn.SetUserVerifiedParams{AuthenticatorID: device, IsUserVerified: true})
	require.NoError(t, err)

	// Without her picture password alice is offered the passkey alone.
	require.NoError(t, s.pics.Delete(t.Context(), "demo", s.alice.ID))
	c.passkeySignIn(s.app, demoEmail, demoPassword)
	require.True(t, eval[bool](c, `document.getElementById("picture") === null`), "no picture")
	c.checkA11y(axe, "visid's login offering the passkey alone")
	shoot("login-alone")
	c.press("#passkey-start", "p.hint")
	assert.Equal(t, "alice@example.com passed both factors", c.appHeading())
}
