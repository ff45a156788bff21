package picture_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// newPoints are well apart: the enrollment tests enroll them.
var newPoints = []picture.Point{{60, 60}, {940, 80}, {80, 690}, {920, 700}, {500, 380}}

// openEnrollment opens an enrollment link for user in a fresh browser and returns the
// enrollment page's URL and page.
func (e *env) openEnrollment(req oidc2fa.EnrollmentRequest) (*browser, string, *page) {
	e.t.Helper()
	req.Tenant = "acme"
	link, err := oidc2fa.NewEnrollmentLink(context.Background(), e.ocfg, req)
	require.NoError(e.t, err)
	b := e.browser()
	p := b.get(link.URL)
	require.Equal(e.t, http.StatusOK, p.status, p.body)
	p = b.post(link.URL, url.Values{})
	require.Equal(e.t, http.StatusSeeOther, p.status, p.body)
	enrollURL := p.location
	p = b.get(enrollURL)
	require.Equal(e.t, http.StatusOK, p.status, p.body)
	return b, enrollURL, p
}

func enrollForm(pg *page, t *testing.T, image string, points, confirm []picture.Point) url.Values {
	return url.Values{"csrf": {pg.csrf(t)}, "image": {image},
		"points": {picture.FormatPoints(points)}, "confirm": {picture.FormatPoints(confirm)}}
}

func TestEnrollAdminLink(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	for _, im := range picture.BuiltinImages() {
		assert.Contains(t, pg.body, `id="image-`+im.Name+`"`)
		assert.Equal(t, http.StatusOK, b.get(enrollURL+"/image/"+im.Name).status)
	}
	assert.Equal(t, http.StatusNotFound, b.get(enrollURL+"/image/nothing").status)
	assert.Contains(t, pg.header.Get("Content-Security-Policy"), "script-src 'self'")

	// The confirmation may differ from the first round by up to r on each axis.
	done := b.post(enrollURL, enrollForm(pg, t, "farm", newPoints, []picture.Point{{80, 40}, {940, 80}, {80, 690}, {920, 700}, {480, 400}}))
	require.Equal(t, http.StatusOK, done.status, done.body)
	assert.Contains(t, done.body, "Your picture password is set up")
	assert.Equal(t, http.StatusBadRequest, b.get(enrollURL).status, "the enrollment has ended")

	c, err := e.b.Pictures.Get(ctx, "acme", e.carol.ID)
	require.NoError(t, err)
	assert.Equal(t, "farm", c.Image)
	lb := e.browser()
	loginURL, lp := e.login(lb, "carol")
	assert.NotEmpty(t, toClient(t, e.attempt(lb, loginURL, lp, picture.FormatPoints(newPoints))).Get("code"))
	assert.NotContains(t, e.log.String(), "60,60", "points are never logged")
}

// TestEnrollAdminLinkEndsWithThePicture: the POST that stores the picture of an administrator's
// link ends the enrollment and records enrollment.completed; a second POST in the same browser
// (a double submit, a back button, a replay) is refused, stores no picture and records nothing.
// Before, the enrollment ended only when the browser fetched the done page, so a second POST
// replaced the picture again, with no event.
func TestEnrollAdminLinkEndsWithThePicture(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "ann"})
	done := b.post(enrollURL, enrollForm(pg, t, "farm", newPoints, newPoints))
	require.Equal(t, http.StatusOK, done.status, done.body)
	assert.Contains(t, done.body, "Your picture password is set up")
	assert.NotContains(t, done.body, enrollURL, "the done page links nothing below the ended enrollment")
	assert.Contains(t, done.header.Values("Set-Cookie")[0], "Max-Age=0", "the binding cookie is cleared")

	events := func() []store.Event {
		ev, err := e.b.Events.List(ctx, "acme", "", 100)
		require.NoError(t, err)
		return ev
	}
	require.Len(t, events(), 1)
	assert.Equal(t, store.EventEnrollmentCompleted, events()[0].Type)
	assert.Equal(t, "admin", events()[0].Actor)
	assert.Equal(t, e.ann.ID, events()[0].SubjectID)
	stored, err := e.b.Pictures.Get(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	require.Equal(t, "farm", stored.Image)

	other := []picture.Point{{100, 100}, {900, 120}, {120, 650}, {880, 660}, {450, 300}}
	again := b.post(enrollURL, enrollForm(pg, t, "beach", other, other))
	assert.Equal(t, http.StatusBadRequest, again.status, again.body)
	assert.Contains(t, again.body, "ended")
	after, err := e.b.Pictures.Get(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Equal(t, stored, after, "the second POST stored nothing")
	assert.Len(t, events(), 1, "the second POST recorded nothing")
	assert.Equal(t, http.StatusBadRequest, b.get(enrollURL+"/done").status)

	lb := e.browser()
	loginURL, lp := e.login(lb, "ann")
	assert.NotEmpty(t, toClient(t, e.attempt(lb, loginURL, lp, picture.FormatPoints(newPoints))).Get("code"))
}

func TestEnrollClientLink(t *testing.T) {
	e := newEnv(t)
	b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "ann", ClientID: e.clientID,
		RedirectURI: testRedirect, State: "enroll-state"})
	assert.Contains(t, pg.body, "Example app asks you to set up a picture password")
	q := toClient(t, b.post(enrollURL, enrollForm(pg, t, "beach", newPoints, newPoints)))
	assert.Equal(t, "complete", q.Get("enrollment"))
	assert.Equal(t, "enroll-state", q.Get("state"))
	assert.Equal(t, e.srv.URL+"/oidc/acme", q.Get("iss"))
	lb := e.browser()
	loginURL, lp := e.login(lb, "ann")
	assert.Contains(t, lp.body, "Beach")
	assert.NotEmpty(t, toClient(t, e.attempt(lb, loginURL, lp, picture.FormatPoints(newPoints))).Get("code"))
}

// TestEnrollRefused: every refusal sends the person back to the page with a message and stores
// nothing.
func TestEnrollRefused(t *testing.T) {
	close := []picture.Point{{60, 60}, {121, 121}, {80, 690}, {920, 700}, {500, 380}} // 61 apart: neighbouring cells
	moved := append([]picture.Point(nil), newPoints...)
	moved[4] = picture.Point{X: 521, Y: 380}
	for name, c := range map[string]struct {
		image           string
		points, confirm string
		message         string
	}{
		"unknown image":   {"moon", picture.FormatPoints(newPoints), picture.FormatPoints(newPoints), "Choose one of the pictures."},
		"too close":       {"farm", picture.FormatPoints(close), picture.FormatPoints(close), "too close together"},
		"confirm differs": {"farm", picture.FormatPoints(newPoints), picture.FormatPoints(moved), "did not match the first"},
		"too few points":  {"farm", "1,2;300,300", "1,2;300,300", "Tap or click 5 points"},
		"malformed":       {"farm", "x", "y", "Tap or click 5 points"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			before, err := e.b.Pictures.Get(ctx, "acme", e.ann.ID)
			require.NoError(t, err)
			b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "ann"})
			p := b.post(enrollURL, url.Values{"csrf": {pg.csrf(t)}, "image": {c.image}, "points": {c.points}, "confirm": {c.confirm}})
			require.Equal(t, http.StatusSeeOther, p.status)
			require.Equal(t, enrollURL, p.location)
			again := b.get(enrollURL)
			assert.Contains(t, again.body, c.message)
			if c.image == "farm" {
				assert.Contains(t, again.body, `value="farm" data-url`, "the chosen image")
				assert.Regexp(t, `id="image-farm" value="farm"[^>]* checked`, again.body)
			}
			after, err := e.b.Pictures.Get(ctx, "acme", e.ann.ID)
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing stored")
		})
	}
}

func TestEnrollCancel(t *testing.T) {
	e := newEnv(t)
	b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "ann", ClientID: e.clientID, RedirectURI: testRedirect, State: "s"})
	q := toClient(t, b.post(enrollURL+"/cancel", url.Values{"csrf": {pg.csrf(t)}}))
	assert.Equal(t, "access_denied", q.Get("error"))

	b, enrollURL, pg = e.openEnrollment(oidc2fa.EnrollmentRequest{User: "ann"})
	p := b.post(enrollURL+"/cancel", url.Values{"csrf": {pg.csrf(t)}})
	assert.Equal(t, http.StatusOK, p.status, "a cancel is what the person asked for")
	assert.Contains(t, p.body, "<h1>Set-up cancelled</h1>")
	assert.NotContains(t, p.body, "sign-in")
}

// TestEnrollClearsLock: enrolling again through the pages unlocks.
func TestEnrollClearsLock(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	toClient(t, e.failLogin(e.browser(), "ann", 5))
	locked, err := e.auth.Locked(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	require.True(t, locked)
	b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "ann"})
	require.Equal(t, http.StatusOK, b.post(enrollURL, enrollForm(pg, t, "study", newPoints, newPoints)).status)
	locked, err = e.auth.Locked(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	assert.False(t, locked)
}

func TestEnrollLibraryErrors(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	assert.ErrorIs(t, e.auth.Enroll(ctx, "acme", e.carol.ID, "moon", newPoints), picture.ErrUnknownImage)
	assert.ErrorIs(t, e.auth.Enroll(ctx, "acme", e.carol.ID, "harbour", []picture.Point{{0, 0}, {20, 20}, {500, 500}, {900, 100}, {100, 700}}), picture.ErrTooClose)
	assert.Error(t, e.auth.Enroll(ctx, "acme", e.carol.ID, "harbour", newPoints[:4]))
	assert.Error(t, e.auth.Enroll(ctx, "acme", e.carol.ID, "harbour", []picture.Point{{1000, 0}, {300, 200}, {500, 400}, {700, 600}, {900, 300}}))
	_, err := e.b.Pictures.Get(ctx, "acme", e.carol.ID)
	assert.Error(t, err, "nothing stored")
}

func TestNewConfigErrors(t *testing.T) {
	e := newEnv(t)
	ok := picture.Config{Credentials: e.b.Pictures, Peppers: []picture.Pepper{testPepper}}
	for name, edit := range map[string]func(*picture.Config){
		"no store":       func(c *picture.Config) { c.Credentials = nil },
		"no pepper":      func(c *picture.Config) { c.Peppers = nil },
		"short pepper":   func(c *picture.Config) { c.Peppers = []picture.Pepper{{ID: "x", Key: []byte("short")}} },
		"3 points":       func(c *picture.Config) { c.Points = 3 },
		"9 points":       func(c *picture.Config) { c.Points = 9 },
		"tolerance 4":    func(c *picture.Config) { c.Tolerance = 4 },
		"negative fails": func(c *picture.Config) { c.MaxFailures = -1 },
		"no images":      func(c *picture.Config) { c.Images = []picture.Image{} },
		"bad image name": func(c *picture.Config) {
			c.Images = []picture.Image{{Name: "A B", Title: "t", ContentType: "image/png", Data: []byte{1}}}
		},
		"bad content type": func(c *picture.Config) {
			c.Images = []picture.Image{{Name: "a", Title: "t", ContentType: "text/html", Data: []byte{1}}}
		},
		"duplicate image": func(c *picture.Config) {
			im := picture.Image{Name: "a", Title: "t", ContentType: "image/png", Data: []byte{1}}
			c.Images = []picture.Image{im, im}
		},
	} {
		cfg := ok
		edit(&cfg)
		_, err := picture.New(cfg)
		assert.Error(t, err, name)
	}
	_, err := picture.New(ok)
	assert.NoError(t, err)
}

// TestEnrollDoubleSubmitAtOnce: several submits of one enrollment sent at once (a double click)
// store one picture and record one enrollment.completed; the others change nothing.
func TestEnrollDoubleSubmitAtOnce(t *testing.T) {
	e := newEnv(t, func(c *picture.Config) { c.Credentials = slowPut{c.Credentials} })
	ctx := context.Background()
	b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	images := []string{"farm", "beach", "study", "harbour"}
	type answer struct {
		image  string
		status int
	}
	answers := make(chan answer, len(images))
	var wg sync.WaitGroup
	for _, im := range images {
		form := enrollForm(pg, t, im, newPoints, newPoints)
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, enrollURL, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := b.c.Do(req)
			if err != nil {
				answers <- answer{im, 0}
				return
			}
			resp.Body.Close()
			answers <- answer{im, resp.StatusCode}
		}()
	}
	wg.Wait()
	close(answers)
	var stored []string
	for a := range answers {
		if a.status == http.StatusOK {
			stored = append(stored, a.image)
		} else {
			assert.Equal(t, http.StatusBadRequest, a.status)
		}
	}
	require.Len(t, stored, 1, "one submit stored the picture")
	ev, err := e.b.Events.List(ctx, "acme", "", 100)
	require.NoError(t, err)
	assert.Len(t, ev, 1, "one enrollment.completed")
	c, err := e.b.Pictures.Get(ctx, "acme", e.carol.ID)
	require.NoError(t, err)
	assert.Equal(t, stored[0], c.Image, "the picture stored is the one the person was told of")
	assert.Equal(t, 1, strings.Count(e.log.String(), "picture password enrolled")+strings.Count(e.log.String(), "picture password replaced"),
		"one picture stored")
}

// slowPut is a credential store whose Put and Create take a while, so that submits sent at once
// overlap as they would with a real store over the network.
type slowPut struct{ store.PictureCredentials }

func (s slowPut) Put(ctx context.Context, c store.PictureCredential) error {
	time.Sleep(50 * time.Millisecond)
	return s.PictureCredentials.Put(ctx, c)
}

func (s slowPut) Create(ctx context.Context, c store.PictureCredential) error {
	time.Sleep(50 * time.Millisecond)
	return s.PictureCredentials.Create(ctx, c)
}

// TestEnrollDonePageAssets: the page after an administrator's enrollment link loads every file it
// references, with the right type, although the enrollment has ended; an inline style sheet is
// one its Content-Security-Policy allows.
func TestEnrollDonePageAssets(t *testing.T) {
	e := newEnv(t)
	b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	done := b.post(enrollURL, enrollForm(pg, t, "farm", newPoints, newPoints))
	require.Equal(t, http.StatusOK, done.status, done.body)
	assert.Contains(t, done.body, "<h1>Picture password ready</h1>")

	base, err := url.Parse(enrollURL)
	require.NoError(t, err)
	refs := regexp.MustCompile(`(?:href|src)="([^"]+)"`).FindAllStringSubmatch(done.body, -1)
	wantType := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
	for _, m := range refs {
		u, err := base.Parse(html.UnescapeString(m[1]))
		require.NoError(t, err)
		got := b.get(u.String())
		assert.Equal(t, http.StatusOK, got.status, "GET %s", u)
		if want, ok := wantType[path.Ext(u.Path)]; ok {
			assert.Equal(t, want, got.header.Get("Content-Type"), "GET %s", u)
		}
	}
	styles := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(done.body, -1)
	require.NotEmpty(t, append(refs, styles...), "the done page has a style sheet")
	for _, m := range styles {
		sum := sha256.Sum256([]byte(m[1]))
		assert.Contains(t, done.header.Get("Content-Security-Policy"), "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
}
