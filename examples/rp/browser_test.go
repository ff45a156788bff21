package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// The browser tests drive a real Chromium through the whole stack in this process: the app,
// then visid's picture login (or enrollment) with the built-in images, then the app again.
// Without a browser they skip, unless VISID_REQUIRE_BROWSER=1.

// browserTimeout bounds each browser test (each subtest of TestBrowserLogin).
const browserTimeout = 60 * time.Second

// waitTimeout bounds one wait for a page or an element.
const waitTimeout = 15 * time.Second

// alicePoints are alice's picture password on the harbour, in canonical units, well apart.
var alicePoints = []picture.Point{{X: 120, Y: 110}, {X: 480, Y: 90}, {X: 860, Y: 200}, {X: 300, Y: 560}, {X: 760, Y: 640}}

// wrongPoints are alicePoints moved half the picture away: no point is near its own.
func wrongPoints() []picture.Point {
	out := make([]picture.Point, len(alicePoints))
	for i, p := range alicePoints {
		out[i] = picture.Point{X: (p.X + picture.Width/2) % picture.Width, Y: (p.Y + picture.Height/2) % picture.Height}
	}
	return out
}

// pictureStack is the app with visid's real picture login: a memstore with tenant demo and the
// active user alice (userName alice, primary email alice@example.com), enrolled on the harbour
// with alicePoints; the picture Authenticator over it; the provider under /oidc/ of an httptest
// server; a client for the app; and the app itself.
type pictureStack struct {
	v       *visid
	app     *appRun
	auth    *picture.Authenticator
	pics    store.PictureCredentials
	alice   *store.User
	mallory *store.User    // another user of the tenant, enrolled on the farm with malloryPoints
	users   store.Users    // the tenant's users at visid, as SCIM provisions them
	cfg     oidc2fa.Config // the provider's, for administrators' enrollment links
	// visidURL is visid's origin as the browser reaches it: the httptest server's, or for a
	// passkey stack http://localhost and its port.
	visidURL string
	passkeys store.Passkeys // the users' passkeys (a passkey stack's only)
	// carol is a user of a passkey stack who has no factor yet: at visid (userName carol) and at
	// the app (carolEmail, carolPassword).
	carol *store.User
}

// malloryPoints are mallory's points on the farm.
var malloryPoints = []picture.Point{{X: 120, Y: 650}, {X: 400, Y: 90}, {X: 640, Y: 420}, {X: 880, Y: 200}, {X: 300, Y: 380}}

// newPictureStack builds the stack; appFlags are extra flags of the app.
func newPictureStack(t *testing.T, appFlags ...string) *pictureStack {
	t.Helper()
	return buildPictureStack(t, false, appFlags...)
}

// carol is the app's and visid's user without a factor of a passkey stack.
const (
	carolEmail    = "carol@example.com"
	carolPassword = "carol's long app password"
)

// newPasskeyStack builds the stack of newPictureStack with passkeys: tenant demo allows them
// (store.SecondFactorPictureOrPasskey), the picture login has the passkey store, and visid is
// at http://localhost and the server's port (WebAuthn takes no IP address as the relying party
// ID; the server listens on 127.0.0.1, which localhost is). The app and visid also know carol,
// who has no factor yet.
func newPasskeyStack(t *testing.T, appFlags ...string) *pictureStack {
	t.Helper()
	users := filepath.Join(t.TempDir(), "users")
	require.NoError(t, os.WriteFile(users, []byte(carolEmail+":"+carolPassword+"\n"), 0o600))
	return buildPictureStack(t, true, append([]string{"-users", users}, appFlags...)...)
}

// buildPictureStack builds the stack of newPictureStack, or with passkeys that of
// newPasskeyStack.
func buildPictureStack(t *testing.T, passkeys bool, appFlags ...string) *pictureStack {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(t.Output(), nil)).With("side", "visid")
	mux := http.NewServeMux()
	v := &visid{srv: httptest.NewServer(mux), users: map[string]*store.User{}}
	t.Cleanup(v.srv.Close)
	base := v.srv.URL
	if passkeys {
		base = "http://localhost:" + strconv.Itoa(v.srv.Listener.Addr().(*net.TCPAddr).Port)
	}
	v.issuer = base + "/oidc/demo"

	b := memstore.New().Backend()
	v.clients = b.Clients
	tenant := store.Tenant{ID: "demo", DisplayName: "Demo"}
	if passkeys {
		tenant.SecondFactor = store.SecondFactorPictureOrPasskey
	}
	require.NoError(t, b.Tenants.Create(ctx, tenant))
	alice, err := b.Users.Create(ctx, "demo", store.User{UserName: "alice", Active: true,
		Emails: []store.MultiValue{{Value: "alice@example.com", Primary: true}}})
	require.NoError(t, err)
	v.users["alice"] = alice

	pepper := make([]byte, 32)
	_, _ = rand.Read(pepper)
	pcfg := picture.Config{
		Credentials: b.Pictures,
		Peppers:     []picture.Pepper{{ID: "test", Key: pepper}},
		Images:      picture.BuiltinImages(),
		Argon2:      picture.Argon2Params{Time: 1, MemoryKiB: 1024, Threads: 1},
		Logger:      log,
	}
	var carol *store.User
	if passkeys {
		pcfg.Passkeys = b.Passkeys
		carol, err = b.Users.Create(ctx, "demo", store.User{UserName: "carol", Active: true,
			Emails: []store.MultiValue{{Value: carolEmail, Primary: true}}})
		require.NoError(t, err)
		v.users["carol"] = carol
	}
	auth, err := picture.New(pcfg)
	require.NoError(t, err)
	require.NoError(t, auth.Enroll(ctx, "demo", alice.ID, "harbour", alicePoints))
	mallory, err := b.Users.Create(ctx, "demo", store.User{UserName: "mallory", Active: true,
		Emails: []store.MultiValue{{Value: "mallory@example.com", Primary: true}}})
	require.NoError(t, err)
	require.NoError(t, auth.Enroll(ctx, "demo", mallory.ID, "farm", malloryPoints))

	secret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant: "demo", Name: "Example app", RedirectURIs: []string{"http://127.0.0.1/not-yet"}})
	require.NoError(t, err)
	v.clientID, v.secret = client.ID, secret
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	cfg := oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Pushed:        b.Pushed, // the app pushes its sign-in requests
		Authenticator: auth,
		Signer:        keys,
		BaseURL:       base + "/oidc",
		Logger:        log,
	}
	provider, err := oidc2fa.New(cfg)
	require.NoError(t, err)
	mux.Handle("/oidc/", http.StripPrefix("/oidc", provider))

	s := &pictureStack{v: v, app: startApp(t, v, appFlags...), auth: auth, pics: b.Pictures, alice: alice, mallory: mallory,
		users: b.Users, cfg: cfg, visidURL: base, carol: carol}
	if passkeys {
		s.passkeys = b.Passkeys
	}
	return s
}

// findBrowser returns the path of Chromium (or Chrome). Without one the test skips, or fails
// when VISID_REQUIRE_BROWSER=1.
func findBrowser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("VISID_REQUIRE_BROWSER") == "1" {
		t.Fatal("no chromium, chromium-browser or google-chrome on PATH, and VISID_REQUIRE_BROWSER=1")
	}
	t.Skip("no chromium, chromium-browser or google-chrome on PATH (apt-get install chromium); VISID_REQUIRE_BROWSER=1 makes this a failure")
	return ""
}

// viewport is the size of the browser's page, in CSS pixels.
type viewport struct {
	name          string
	width, height int64
	phone         bool // a mobile device with a touch screen: taps instead of clicks
	// lang, when set, is the browser's language (its Accept-Language): visid's pages speak it.
	lang string
}

var (
	desktop = viewport{name: "desktop", width: 1200, height: 900}
	phone   = viewport{name: "phone", width: 390, height: 844, phone: true}
)

// chrome is a tab of a headless Chromium of its own, with a fresh profile, that ends with the
// test or after browserTimeout.
type chrome struct {
	t   *testing.T
	ctx context.Context
	vp  viewport

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// newChrome starts the browser exe (findBrowser's path) and opens a tab of the size of vp, with
// a phone's screen and touch emulated for a phone.
func newChrome(t *testing.T, exe string, vp viewport) *chrome {
	t.Helper()
	return newChromeFor(t, exe, vp, browserTimeout)
}

// newChromeFor is newChrome with a browser that ends after timeout.
func newChromeFor(t *testing.T, exe string, vp viewport, timeout time.Duration) *chrome {
	t.Helper()
	profile := t.TempDir() // removed after the browser has ended: cleanups run last first
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	opts := append([]chromedp.ExecAllocatorOption{},
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root
		chromedp.DisableGPU,
		// Without these the browser tries to reach the network, which is closed here.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(profile),
	)
	if vp.lang != "" {
		opts = append(opts, chromedp.Flag("lang", vp.lang), chromedp.Flag("accept-lang", vp.lang))
	}
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)

	c := &chrome{t: t, ctx: ctx, vp: vp}
	messages := chromedp.Console(ctx) // starts the browser
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			c.mu.Lock()
			c.console = append(c.console, m)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(c.checkConsole) // before the tab closes
	emulate := []chromedp.EmulateViewportOption{}
	if vp.phone {
		emulate = append(emulate, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	c.do(chromedp.EmulateViewport(vp.width, vp.height, emulate...))
	return c
}

// checkConsole fails the test when a page broke its Content-Security-Policy or threw, and logs
// what else the pages said.
func (c *chrome) checkConsole() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.console {
		if m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
			c.t.Errorf("browser console: %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1)
		} else if !strings.HasSuffix(m.URL, "/favicon.ico") { // neither server has one
			c.t.Logf("browser console: %s: %s (%s)", m.Type, m.Text, m.URL)
		}
	}
}

// do runs actions and fails the test, with where the browser is, when one fails.
func (c *chrome) do(actions ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	if err := chromedp.Do(c.ctx, actions...); err != nil {
		c.t.Fatalf("browser: %v\n%s", err, c.where())
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func eval[T any](c *chrome, expr string) T {
	c.t.Helper()
	v, err := chromedp.Run(c.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		c.t.Fatalf("browser: evaluating %s: %v\n%s", expr, err, c.where())
	}
	return v
}

// where describes the page the browser shows, for a failure message.
func (c *chrome) where() string {
	ctx, cancel := context.WithTimeout(c.ctx, 2*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return "at " + loc + ":\n" + text
}

// waitFor waits until the JavaScript expression cond is true. chromedp's Poll cannot be used:
// it builds its predicate with new Function, which the pages' Content-Security-Policy forbids.
// Expressions evaluated over the DevTools protocol are not subject to it.
func (c *chrome) waitFor(what, cond string) {
	c.t.Helper()
	// A shorter deadline than the test's, so that where can still ask the browser.
	ctx, cancel := context.WithTimeout(c.ctx, waitTimeout)
	defer cancel()
	var last error
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		last = err // evaluating fails while a page loads: try again
		select {
		case <-ctx.Done():
			c.t.Fatalf("browser: waiting for %s: %v (last error: %v)\n%s", what, ctx.Err(), last, c.where())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// markPage marks the document the browser shows, so that waitPage can tell the next one from
// it, also when the next one has the same URL and elements (a failed attempt).
func (c *chrome) markPage() {
	c.t.Helper()
	c.do(chromedp.Evaluate[chromedp.Void](`document.documentElement.setAttribute("data-left", "")`))
}

// waitPage waits until a document that markPage has not marked is fully loaded (its scripts
// have run and its images are in) and has an element matching sel.
func (c *chrome) waitPage(sel string) {
	c.t.Helper()
	c.waitFor("a page with "+sel, fmt.Sprintf(`document.readyState === "complete" && `+
		`!document.documentElement.hasAttribute("data-left") && document.querySelector(%q) !== null`, sel))
}

// open navigates to url and waits for an element matching sel.
func (c *chrome) open(url, sel string) {
	c.t.Helper()
	c.markPage()
	c.do(chromedp.Navigate(url))
	c.waitPage(sel)
}

// press clicks the button sel, which leaves the page, and waits for the next page, which has an
// element matching next.
func (c *chrome) press(sel, next string) {
	c.t.Helper()
	c.do(chromedp.WaitEnabled(chromedp.CSS(sel)))
	c.markPage()
	c.do(chromedp.Click(chromedp.CSS(sel)))
	c.waitPage(next)
}

// text is the text content of the first element matching sel, trimmed.
func (c *chrome) text(sel string) string {
	c.t.Helper()
	return strings.TrimSpace(eval[string](c, fmt.Sprintf(`document.querySelector(%q).textContent`, sel)))
}

// waitText waits until the text of the first element matching sel is want.
func (c *chrome) waitText(sel, want string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%s to read %q", sel, want),
		fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? "").trim() === %q`, sel, want))
}

// passwordForm fills in the app's password form, open in the browser, and presses the button
// of action.
func (c *chrome) passwordForm(email, password, action, next string) {
	c.t.Helper()
	c.do(
		// The form shows the email of the session's last sign-in again.
		chromedp.Clear(chromedp.CSS(`input[name="email"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), email),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), password),
	)
	c.press(`button[name="action"][value="`+action+`"]`, next)
}

// pictureLoaded is true when visid's #picture has loaded an image (of the enrollment's image
// name, when the expression is formatted with one).
const pictureLoaded = `(() => { const i = document.getElementById("picture");
	return i !== null && i.complete && i.naturalWidth > 0 && i.src.includes(%q); })()`

// signIn signs in with the password at the app and waits for visid's picture login page, with
// its picture loaded.
func (c *chrome) signIn(app *appRun, email, password string) {
	c.t.Helper()
	c.open(app.url+"/", `input[name="email"]`)
	c.passwordForm(email, password, actionSignIn, "#login-form #picture")
	c.waitFor("the picture", fmt.Sprintf(pictureLoaded, "/image"))
}

// rect is a bounding client rectangle, in CSS pixels of the viewport.
type rect struct {
	Left   float64 `json:"left"`
	Top    float64 `json:"top"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// pictureRect scrolls #picture into the middle of the viewport and returns its bounding client
// rectangle, after checking that all of it is in the viewport.
func (c *chrome) pictureRect() rect {
	c.t.Helper()
	r := eval[rect](c, `(() => {
		const img = document.getElementById("picture");
		img.scrollIntoView({block: "center", inline: "center"});
		const r = img.getBoundingClientRect();
		return {left: r.left, top: r.top, width: r.width, height: r.height};
	})()`)
	require.Greater(c.t, r.Width, 0.0)
	assert.InDelta(c.t, 4.0/3.0, r.Width/r.Height, 0.01, "the picture is shown at 4:3: %+v", r)
	require.True(c.t, r.Left >= 0 && r.Top >= 0 && r.Left+r.Width <= float64(c.vp.width) && r.Top+r.Height <= float64(c.vp.height),
		"the whole picture is in the %dx%d viewport: %+v", c.vp.width, c.vp.height, r)
	return r
}

// pixel is where, in viewport coordinates, the browser must click for picture.js to read the
// canonical point p off an image shown at r: the centre of p's canonical unit. picture.js
// computes x = floor((clientX − r.left) / r.width · 1000), and likewise y with 750, so the
// centre is r.left + (p.X + ½) · r.width / 1000. Chromium hands the click event whole-pixel
// clientX and clientY, so where a unit is smaller than a CSS pixel picture.js reads a point up
// to a pixel's worth of units off p (1.4 units on a 730-pixel picture, 2.6 on a phone's 390):
// far inside the tolerance of 20.
func pixel(r rect, p picture.Point) (x, y float64) {
	return r.Left + (float64(p.X)+0.5)*r.Width/picture.Width,
		r.Top + (float64(p.Y)+0.5)*r.Height/picture.Height
}

// clickPoint clicks (on a phone: taps, and confirms the tap) canonical point p on #picture.
func (c *chrome) clickPoint(p picture.Point) {
	c.t.Helper()
	x, y := pixel(c.pictureRect(), p)
	if c.vp.phone {
		c.tapAt(x, y)
	} else {
		c.do(chromedp.MouseClickXY(x, y))
	}
}

// tapAt taps the picture at viewport pixel (x, y), checks that the page shows the ring of the
// tap, there, and asks for a confirmation before the point counts, and confirms it.
func (c *chrome) tapAt(x, y float64) {
	c.t.Helper()
	before := c.text("#count")
	c.do(chromedp.TapXY(x, y))
	c.waitFor("the tap's ring", `!document.getElementById("tap-confirm").hidden && !document.getElementById("pending").hidden`)
	ring := eval[rect](c, `(() => { const r = document.getElementById("pending").getBoundingClientRect();
		return {left: r.left, top: r.top, width: r.width, height: r.height}; })()`)
	assert.InDelta(c.t, x, ring.Left+ring.Width/2, 3, "the ring is centred where the tap landed")
	assert.InDelta(c.t, y, ring.Top+ring.Height/2, 3, "the ring is centred where the tap landed")
	assert.Equal(c.t, before, c.text("#count"), "a tap counts only once confirmed")
	c.do(chromedp.Click(chromedp.CSS("#use-point")))
	c.waitFor("the ring to go", `document.getElementById("tap-confirm").hidden && document.getElementById("pending").hidden`)
}

// clickPoints clicks points on #picture, in order, checking after each that the page counted
// it (of picture.DefaultPoints).
func (c *chrome) clickPoints(points []picture.Point) {
	c.t.Helper()
	for i, p := range points {
		c.clickPoint(p)
		c.waitText("#count", visidText(c.vp, "script.count.other", "placed", strconv.Itoa(i+1), "n", strconv.Itoa(picture.DefaultPoints)))
	}
}

// screenshot saves a screenshot of the whole page in dir and logs where.
func (c *chrome) screenshot(dir, name string) {
	c.t.Helper()
	png, err := chromedp.Run(c.ctx, chromedp.FullScreenshot(100))
	require.NoError(c.t, err)
	path := filepath.Join(dir, name)
	require.NoError(c.t, os.WriteFile(path, png, 0o644))
	c.t.Logf("screenshot: %s", path)
}

// appHeading waits for a page of the app (after visid) and returns its heading.
func (c *chrome) appHeading() string {
	c.t.Helper()
	c.waitPage("p.hint")
	return c.text("h1")
}

// TestBrowserLogin signs alice in with both factors in a real browser: the password at the app,
// then her five points on the harbour at visid, clicked at the pixels where the picture shows
// them, on a desktop and on a phone, where the picture is scaled down to fit.
func TestBrowserLogin(t *testing.T) {
	shots, err := os.MkdirTemp("", "visid-browser-")
	require.NoError(t, err)
	t.Logf("screenshots in %s (kept)", shots)
	for _, vp := range []viewport{desktop, phone} {
		t.Run(vp.name, func(t *testing.T) {
			exe := findBrowser(t)
			s := newPictureStack(t)
			c := newChrome(t, exe, vp)

			c.signIn(s.app, demoEmail, demoPassword)
			assert.Equal(t, "Your picture: Harbour", eval[string](c, `document.getElementById("picture").alt`))
			assert.Equal(t, "0 of 5 points", c.text("#count"))
			assert.True(t, eval[bool](c, `document.getElementById("submit").disabled`), "Continue waits for the points")
			r := c.pictureRect()
			assert.LessOrEqual(t, r.Width, float64(vp.width), "the picture fits the width")
			if vp.phone {
				assert.InDelta(t, float64(vp.width), r.Width, 0.5, "on a phone the picture spans the screen's width")
			}
			c.screenshot(shots, "login-"+vp.name+".png")

			c.clickPoints(alicePoints)
			assert.Equal(t, "5 of 5 points", c.text("#count"))
			c.press("#submit", "p.hint")
			assert.Equal(t, "alice@example.com passed both factors", c.appHeading())
			assert.Contains(t, c.text("dl"), s.alice.ID, "the visid subject")
			assert.Contains(t, c.text("dl"), "pwd", "amr of a picture password")
		})
	}
}

// TestBrowserEnrollment replaces alice's picture password as a person does: the password alone
// is not enough ("Set up picture password" is refused), so she signs in with both factors,
// chooses "Change picture password", passes her current picture password again, and sets up a
// new one on another built-in image than the harbour (the last one offered); then she signs in
// with it.
func TestBrowserEnrollment(t *testing.T) {
	exe := findBrowser(t)
	s := newPictureStack(t)
	c := newChrome(t, exe, desktop)
	ctx := t.Context()
	images := picture.BuiltinImages()
	chosen := images[len(images)-1]
	require.NotEqual(t, "harbour", chosen.Name)
	points := []picture.Point{{X: 150, Y: 120}, {X: 820, Y: 140}, {X: 500, Y: 380}, {X: 180, Y: 620}, {X: 840, Y: 600}}

	c.open(s.app.url+"/", `input[name="email"]`)
	c.passwordForm(demoEmail, demoPassword, actionEnroll, `a[href="/"]`)
	assert.Equal(t, "You already have a picture password", c.text("h1"), "the password alone replaces nothing")

	c.signIn(s.app, demoEmail, demoPassword)
	c.clickPoints(alicePoints)
	c.press("#submit", "p.hint")
	require.Equal(t, "alice@example.com passed both factors", c.appHeading())
	c.press(`form[action="/picture"] button`, "#login-form #picture")
	c.waitFor("the picture", fmt.Sprintf(pictureLoaded, "/image"))
	assert.Equal(t, "Your picture: Harbour", eval[string](c, `document.getElementById("picture").alt`), "the current factor first")
	c.clickPoints(alicePoints)
	c.press("#submit", "#continue")
	assert.True(t, strings.HasPrefix(eval[string](c, `location.href`), s.v.srv.URL+"/oidc/enroll/demo/"), "at visid's link page")
	assert.Equal(t, "Set up your second factor", c.text("h1"))

	c.press("#continue", "#enroll-form")
	assert.Equal(t, "Example app asks you to set up a picture password.", c.text("p.client"))
	c.do(chromedp.Click(chromedp.CSS("#image-" + chosen.Name)))
	c.do(chromedp.WaitEnabled(chromedp.CSS("#choose")), chromedp.Click(chromedp.CSS("#choose")))
	c.do(chromedp.WaitVisible(chromedp.CSS("#workspace")))
	c.waitFor("the chosen picture", fmt.Sprintf(pictureLoaded, "/image/"+chosen.Name))
	assert.Equal(t, "Your picture: "+chosen.Title, eval[string](c, `document.getElementById("picture").alt`))

	// Step 2: the points; after the last, step 3 counts again from 0.
	c.clickPoints(points[:len(points)-1])
	const pageTop = `document.getElementById("picture").getBoundingClientRect().top + window.scrollY`
	before := eval[float64](c, pageTop)
	c.clickPoint(points[len(points)-1])
	c.waitFor("step 3", `!document.getElementById("step-confirm").hidden`)
	assert.Equal(t, "0 of 5 points", c.text("#count"))
	assert.InDelta(t, before, eval[float64](c, pageTop), 0.5, "the picture stays where it was when step 3 replaces step 2")
	// Step 3: the same points again.
	c.clickPoints(points)
	c.press("#submit", "p.hint")
	assert.Equal(t, "Your picture password is set up", c.text("h1"))
	assert.Contains(t, c.text("body"), changedText)

	cred, err := s.pics.Get(ctx, "demo", s.alice.ID)
	require.NoError(t, err)
	assert.Equal(t, chosen.Name, cred.Image)

	c.press(`a[href="/"]`, `form[action="/logout"]`)
	assert.Contains(t, c.text("h1"), "passed both factors", "still signed in")
	c.press(`form[action="/logout"] button`, `input[name="email"]`)

	c.signIn(s.app, demoEmail, demoPassword)
	assert.Equal(t, "Your picture: "+chosen.Title, eval[string](c, `document.getElementById("picture").alt`))
	c.clickPoints(points)
	c.press("#submit", "p.hint")
	assert.Equal(t, "alice@example.com passed both factors", c.appHeading())
}

// TestBrowserLockout: five wrong attempts lock alice's picture password; the right points then
// fail too, and the page does not tell.
func TestBrowserLockout(t *testing.T) {
	exe := findBrowser(t)
	s := newPictureStack(t)
	c := newChrome(t, exe, desktop)
	ctx := t.Context()
	const failed = "That did not match. Try again."

	c.signIn(s.app, demoEmail, demoPassword)
	var wrongPage string
	for attempt := 1; attempt <= 4; attempt++ {
		c.clickPoints(wrongPoints())
		c.press("#submit", "#login-form #picture")
		c.waitFor("the picture", fmt.Sprintf(pictureLoaded, "/image"))
		assert.Equal(t, failed, c.text("p.message"), "attempt %d", attempt)
		assert.Equal(t, "0 of 5 points", c.text("#count"))
		if attempt == 1 {
			wrongPage = eval[string](c, `document.body.innerText`)
		}
		locked, err := s.auth.Locked(ctx, "demo", s.alice.ID)
		require.NoError(t, err)
		assert.False(t, locked, "not yet locked after attempt %d", attempt)
	}
	c.clickPoints(wrongPoints())
	c.press("#submit", "p.hint")
	assert.Equal(t, "The sign-in was not finished", c.appHeading())
	assert.Contains(t, eval[string](c, `location.search`), "error=access_denied")
	locked, err := s.auth.Locked(ctx, "demo", s.alice.ID)
	require.NoError(t, err)
	assert.True(t, locked, "locked after five wrong attempts")

	c.open(s.app.url+"/", `input[name="email"]`)
	assert.NotContains(t, c.text("body"), "passed both factors")

	// A new sign-in: the right points fail as the wrong ones did.
	c.signIn(s.app, demoEmail, demoPassword)
	c.clickPoints(alicePoints)
	c.press("#submit", "#login-form #picture")
	c.waitFor("the picture", fmt.Sprintf(pictureLoaded, "/image"))
	assert.Equal(t, failed, c.text("p.message"))
	assert.Equal(t, wrongPage, eval[string](c, `document.body.innerText`), "a locked login looks like a wrong attempt")
	locked, err = s.auth.Locked(ctx, "demo", s.alice.ID)
	require.NoError(t, err)
	assert.True(t, locked, "still locked")
}
