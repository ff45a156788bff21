package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/picture"
)

// Keyboard steps of picture.js's cross, in canonical units: an arrow key, and Shift with it.
const (
	keyStep    = 10
	keyBigStep = 50
)

// harbourDemoPoints are the points of examples/idp's demo user alice on the harbour (the sun,
// the lighthouse's lamp room, the tall red buoy's white band, the fish, the anchor's crossbar).
var harbourDemoPoints = []picture.Point{{X: 700, Y: 78}, {X: 100, Y: 158}, {X: 420, Y: 495}, {X: 900, Y: 515}, {X: 265, Y: 700}}

// keyCursor is where picture.js's cross is, in canonical units; it starts in the middle.
type keyCursor struct{ x, y int }

func newKeyCursor() keyCursor { return keyCursor{x: picture.Width / 2, y: picture.Height / 2} }

// moveAxis is the keys that move the cross from at toward want on one axis (less and more are
// the keys that lower and raise it), and where the cross ends: Shift-steps while more than half a
// big step away, then steps while more than half a step away, clamped to 0..limit-1 as
// picture.js clamps.
func moveAxis(at, want, limit int, less, more string) (keys []chromedp.Action[chromedp.Void], end int) {
	for _, s := range []struct {
		size  int
		shift bool
	}{{keyBigStep, true}, {keyStep, false}} {
		for abs(want-at) > s.size/2 {
			key, d := more, s.size
			if want < at {
				key, d = less, -s.size
			}
			var opts []chromedp.KeyOption
			if s.shift {
				opts = append(opts, chromedp.KeyModifiers(chromedp.ModifierShift))
			}
			keys = append(keys, chromedp.KeyEvent(key, opts...))
			at = min(max(at+d, 0), limit-1)
		}
	}
	return keys, at
}

func abs(v int) int { return max(v, -v) }

// keyTo moves the cross to (about) p with the arrow keys and returns where it ends: within half
// a step of p on each axis.
func (c *chrome) keyTo(cur keyCursor, p picture.Point) keyCursor {
	c.t.Helper()
	kx, x := moveAxis(cur.x, p.X, picture.Width, kb.ArrowLeft, kb.ArrowRight)
	ky, y := moveAxis(cur.y, p.Y, picture.Height, kb.ArrowUp, kb.ArrowDown)
	c.do(append(kx, ky...)...)
	require.LessOrEqual(c.t, abs(x-p.X), keyStep/2)
	require.LessOrEqual(c.t, abs(y-p.Y), keyStep/2)
	return keyCursor{x: x, y: y}
}

// keyPoints places points with the keyboard alone on the focused picture, where placed points
// are already counted, checking the count after each, and returns where the cross ends.
func (c *chrome) keyPoints(cur keyCursor, placed int, points []picture.Point) keyCursor {
	c.t.Helper()
	for i, p := range points {
		cur = c.keyTo(cur, p)
		c.do(chromedp.KeyEvent(kb.Enter))
		c.waitText("#count", fmt.Sprintf("%d of %d points", placed+i+1, picture.DefaultPoints))
	}
	return cur
}

// activeID is the id of the element that has the focus.
func (c *chrome) activeID() string {
	c.t.Helper()
	return eval[string](c, `document.activeElement ? document.activeElement.id : ""`)
}

// tabTo presses Tab until the element with id has the focus, at most max times.
func (c *chrome) tabTo(id string, max int) {
	c.t.Helper()
	for range max {
		if c.activeID() == id {
			return
		}
		c.do(chromedp.KeyEvent(kb.Tab))
	}
	require.Equal(c.t, id, c.activeID(), "Tab reaches #%s", id)
}

// TestBrowserKeyboardLogin signs alice in with the keyboard alone on visid's page: Tab to the
// picture, the arrow keys to each point, Enter to place it, Backspace to take a wrong one back,
// and Enter on Continue, which has the focus once the last point is placed.
func TestBrowserKeyboardLogin(t *testing.T) {
	exe := findBrowser(t)
	s := newPictureStack(t)
	c := newChrome(t, exe, desktop)
	c.signIn(s.app, demoEmail, demoPassword)

	assert.Equal(t, "instructions keyboard-help", eval[string](c, `document.getElementById("frame").getAttribute("aria-describedby")`))
	assert.Contains(t, c.text("#keyboard-help"), "arrow keys")
	assert.Equal(t, "none", eval[string](c, `getComputedStyle(document.getElementById("cursor")).display`), "no cross before the keyboard")
	c.do(chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	c.tabTo("frame", 1)
	assert.Equal(t, "block", eval[string](c, `getComputedStyle(document.getElementById("cursor")).display`), "the cross shows with keyboard focus")

	cur := c.keyPoints(newKeyCursor(), 0, alicePoints[:2])
	// A wrong third point, taken back with Backspace.
	cur = c.keyTo(cur, picture.Point{X: 950, Y: 700})
	c.do(chromedp.KeyEvent(kb.Enter))
	c.waitText("#count", "3 of 5 points")
	c.do(chromedp.KeyEvent(kb.Backspace))
	c.waitText("#count", "2 of 5 points")
	assert.Equal(t, "Removed the last point.", c.text("#notice"))

	// The cross is drawn where the keys put it.
	r := c.pictureRect()
	cross := eval[rect](c, `(() => { const r = document.getElementById("cursor").getBoundingClientRect();
		return {left: r.left, top: r.top, width: r.width, height: r.height}; })()`)
	x, y := pixel(r, picture.Point{X: cur.x, Y: cur.y})
	assert.InDelta(t, x, cross.Left+cross.Width/2, 2)
	assert.InDelta(t, y, cross.Top+cross.Height/2, 2)

	cur = c.keyPoints(cur, 2, alicePoints[2:])
	assert.Equal(t, "submit", c.activeID(), "Continue has the focus once every point is placed")
	// One Shift+Tab from Continue reaches Undo last point, which takes the last point back (and
	// Start over, which takes them all, is one step farther); the cross is where it was.
	c.do(chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
	require.Equal(t, "undo", c.activeID(), "Shift+Tab from Continue")
	c.do(chromedp.KeyEvent(kb.Enter))
	c.waitText("#count", "4 of 5 points")
	assert.Equal(t, "Removed the last point.", c.text("#notice"))
	c.do(chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
	assert.Equal(t, "start-over", c.activeID())
	c.tabTo("frame", 5)
	c.keyPoints(cur, 4, alicePoints[4:])
	assert.Equal(t, "submit", c.activeID())
	c.markPage()
	c.do(chromedp.KeyEvent(kb.Enter))
	assert.Equal(t, "alice@example.com passed both factors", c.appHeading())
}

// TestBrowserKeyboardEnrollment sets up a new picture password with the keyboard alone: the
// picture chosen with the arrow keys, the points placed and confirmed with the cross; then alice
// signs in with the new points, clicked.
func TestBrowserKeyboardEnrollment(t *testing.T) {
	exe := findBrowser(t)
	s := newPictureStack(t)
	c := newChrome(t, exe, desktop)
	points := []picture.Point{{X: 150, Y: 120}, {X: 820, Y: 140}, {X: 500, Y: 380}, {X: 180, Y: 620}, {X: 840, Y: 600}}

	c.signIn(s.app, demoEmail, demoPassword)
	c.clickPoints(alicePoints)
	c.press("#submit", "p.hint")
	require.Equal(t, "alice@example.com passed both factors", c.appHeading())
	c.press(`form[action="/picture"] button`, "#login-form #picture")
	c.waitFor("the picture", fmt.Sprintf(pictureLoaded, "/image"))
	c.clickPoints(alicePoints)
	c.press("#submit", "#continue")
	c.press("#continue", "#enroll-form")

	// Step 1: the first picture is selected; ArrowRight selects the next, Tab goes to "Use this
	// picture" and Enter uses it.
	images := picture.BuiltinImages()
	c.do(chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	c.tabTo("image-"+images[0].Name, 3)
	c.do(chromedp.KeyEvent(kb.ArrowRight))
	c.waitFor("the second picture selected", fmt.Sprintf(`document.getElementById(%q).checked`, "image-"+images[1].Name))
	c.tabTo("choose", 2)
	c.do(chromedp.KeyEvent(kb.Enter))
	c.do(chromedp.WaitVisible(chromedp.CSS("#workspace")))
	c.waitFor("the chosen picture", fmt.Sprintf(pictureLoaded, "/image/"+images[1].Name))

	// Step 2, then step 3, with the cross; the picture keeps the focus between them.
	c.tabTo("frame", 2)
	cur := c.keyPoints(newKeyCursor(), 0, points[:len(points)-1])
	cur = c.keyTo(cur, points[len(points)-1])
	c.do(chromedp.KeyEvent(kb.Enter))
	c.waitFor("step 3", `!document.getElementById("step-confirm").hidden`)
	assert.Equal(t, "0 of 5 points", c.text("#count"))
	assert.Equal(t, "frame", c.activeID(), "the picture keeps the focus")
	assert.Equal(t, "confirm-instructions keyboard-help", eval[string](c, `document.getElementById("frame").getAttribute("aria-describedby")`))
	c.keyPoints(cur, 0, points)
	assert.Equal(t, "submit", c.activeID())
	c.markPage()
	c.do(chromedp.KeyEvent(kb.Enter))
	c.waitPage("p.hint")
	assert.Equal(t, "Your picture password is set up", c.text("h1"))

	cred, err := s.pics.Get(t.Context(), "demo", s.alice.ID)
	require.NoError(t, err)
	assert.Equal(t, images[1].Name, cred.Image)

	// The points placed with the keys are the whole numbers the clicks give.
	c.press(`a[href="/"]`, `form[action="/logout"]`)
	c.press(`form[action="/logout"] button`, `input[name="email"]`)
	c.signIn(s.app, demoEmail, demoPassword)
	c.clickPoints(points)
	c.press("#submit", "p.hint")
	assert.Equal(t, "alice@example.com passed both factors", c.appHeading())
}

// TestBrowserPhoneTaps: on a 390×844 phone the picture spans the screen, and taps 6 CSS pixels
// off each of the demo's points, each way on each axis, still sign alice in; each tap shows a
// ring where it landed and counts once confirmed, and no ring is left when the form is sent.
func TestBrowserPhoneTaps(t *testing.T) {
	exe := findBrowser(t)
	s := newPictureStack(t)
	require.NoError(t, s.auth.Enroll(t.Context(), "demo", s.alice.ID, "harbour", harbourDemoPoints))
	const off = 6.0
	for i, offsets := range [][][2]float64{
		{{off, -off}, {-off, off}, {off, off}, {-off, -off}, {off, 0}},
		{{-off, off}, {off, -off}, {-off, -off}, {off, off}, {-off, 0}},
		{{0, off}, {0, -off}, {off, 0}, {-off, 0}, {0, off}},
	} {
		t.Run(fmt.Sprint("offsets ", i+1), func(t *testing.T) {
			c := newChrome(t, exe, phone)
			c.signIn(s.app, demoEmail, demoPassword)
			r := c.pictureRect()
			assert.InDelta(t, float64(phone.width), r.Width, 0.5, "the picture spans the phone's width")
			t.Logf("6 CSS px on a %.0f px picture is %.1f canonical units (the tolerance is 20)", r.Width, off*picture.Width/r.Width)
			for j, p := range harbourDemoPoints {
				x, y := pixel(r, p)
				c.tapAt(x+offsets[j][0], y+offsets[j][1])
				c.waitText("#count", fmt.Sprintf("%d of 5 points", j+1))
			}
			assert.True(t, eval[bool](c, `document.getElementById("pending").hidden`), "no ring before the form is sent")
			c.press("#submit", "p.hint")
			assert.Equal(t, "alice@example.com passed both factors", c.appHeading())
			assert.NotContains(t, strings.ToLower(c.text("body")), "ring")
		})
	}
}

// TestBrowserKeyboardPasskey adds a passkey and signs in with it with the keyboard alone: on
// visid's enrollment page and on its login page the first Tab from the top reaches the passkey
// button, named and described for screen readers, and Enter (on the enrollment, and the first
// sign-in) or Space (the second) starts the ceremony, which Chromium's virtual authenticator
// answers.
func TestBrowserKeyboardPasskey(t *testing.T) {
	exe := findBrowser(t)
	s := newPasskeyStack(t)
	c := newChrome(t, exe, desktop)
	device := c.addAuthenticator(false)
	// fromTop takes the focus back to the top of the page, as a page freshly loaded has it.
	fromTop := func() {
		c.do(chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)`))
	}
	checkButton := func(kind string) {
		t.Helper()
		name, description := c.axNameDescription("passkey-start")
		assert.Equal(t, visidText(c.vp, "passkey."+kind+".button"), name, "the button's accessible name")
		assert.Equal(t, visidText(c.vp, "passkey."+kind+".instructions"), description, "its description")
		assert.Equal(t, "passkey-instructions", eval[string](c, `document.getElementById("passkey-start").getAttribute("aria-describedby")`))
	}

	c.passkeyLink(s, s.alice)
	fromTop()
	c.tabTo("passkey-start", 1)
	checkButton("enroll")
	c.markPage()
	c.do(chromedp.KeyEvent(kb.Enter))
	c.waitPage("p.lead")
	assert.Equal(t, visidText(c.vp, "passkey.done.title"), c.text("h1"))
	ps, err := s.passkeys.List(t.Context(), "demo", s.alice.ID)
	require.NoError(t, err)
	require.Len(t, ps, 1, "alice's passkey is stored")

	// While the browser waits for the authenticator (not touched yet), the button is busy and
	// keeps the focus.
	presence := func(on bool) {
		_, err := chromedp.Call(c.ctx, webauthn.SetAutomaticPresenceSimulation,
			webauthn.SetAutomaticPresenceSimulationParams{AuthenticatorID: device, Enabled: on})
		require.NoError(t, err)
	}
	presence(false)
	c.passkeySignIn(s.app, demoEmail, demoPassword)
	fromTop()
	c.tabTo("passkey-start", 1)
	c.do(chromedp.KeyEvent(kb.Enter))
	c.waitText("#passkey-notice", visidText(c.vp, "script.passkeyWaiting"))
	assert.Equal(t, "passkey-start", c.activeID(), "the busy button keeps the focus")
	assert.Equal(t, "true", eval[string](c, `document.getElementById("passkey-start").getAttribute("aria-disabled")`))
	// Leaving the page ends the browser's request before the authenticator can be touched.
	c.open(s.app.url+"/", `input[name="email"]`)
	presence(true)

	for _, key := range []string{kb.Enter, " "} {
		c.passkeySignIn(s.app, demoEmail, demoPassword)
		fromTop()
		c.tabTo("passkey-start", 1)
		checkButton("login")
		c.markPage()
		c.do(chromedp.KeyEvent(key))
		require.Equal(t, "alice@example.com passed both factors", c.appHeading(), "key %q", key)
		assert.Equal(t, "hwk, mfa", c.amr())
		c.signOut()
	}
}
