package picture

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// enrollState is what the enrollment pages keep in the interaction between requests. It never
// holds points: they travel only in the final POST.
type enrollState struct {
	Message  string `json:"k,omitempty"` // why the last POST was refused: a message key
	Selected string `json:"s,omitempty"` // the image the person had chosen
	// Storing: a request of the enrollment is storing a picture; the others change nothing.
	Storing bool `json:"w,omitempty"`
	// Passkey is the pending passkey challenge, taken by the request that answers it.
	Passkey *session `json:"p,omitempty"`
}

// errStoring is what claim returns when another request of the enrollment stores a picture.
var errStoring = errors.New("picture: another request of the enrollment is storing a picture")

// setState changes the enrollment's state with fn, atomically (Enrollment.UpdateState).
func setState(ctx context.Context, e *oidc2fa.Enrollment, fn func(st *enrollState) error) error {
	return e.UpdateState(ctx, func(old []byte) ([]byte, error) {
		var st enrollState
		if len(old) > 0 {
			_ = json.Unmarshal(old, &st) // what an earlier call stored
		}
		if err := fn(&st); err != nil {
			return nil, err
		}
		return json.Marshal(st)
	})
}

// ServeEnroll implements oidc2fa.Enroller. Below the enrollment URL it serves:
//
//	GET  ""                    the page: choose a picture, click the points, click them again
//	POST ""                    fields csrf, image, points and confirm ("x1,y1;x2,y2;…")
//	GET  image/{name}          a picture
//	POST cancel                the person gives up (field csrf)
//	GET  static/picture.js, static/picture.css
//
// The POST that stores the picture also ends the enrollment (Enrollment.Done): the browser goes
// back to the application, or, without one (an administrator's link), the answer to that POST
// is the last page, which needs nothing of the ended enrollment. A second POST finds the
// enrollment ended and changes nothing.
func (a *Authenticator) ServeEnroll(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment) {
	if serveStatic(w, r, e.Rest) {
		return
	}
	var st enrollState
	if len(e.State) > 0 {
		_ = json.Unmarshal(e.State, &st) // the provider stored what SaveState was given
	}
	switch {
	case strings.HasPrefix(e.Rest, "image/"):
		im := a.images.byName[strings.TrimPrefix(e.Rest, "image/")]
		if im == nil {
			http.NotFound(w, r)
			return
		}
		serveImage(w, r, im)
	case e.Rest == "" && r.Method == http.MethodGet:
		t := a.texts.Match(e.Languages...)
		d := &pageData{
			T:            t,
			Title:        t.Text("enroll.title"),
			ClientName:   e.Client.Name,
			StyleURL:     e.Path(stylePath),
			ScriptURL:    e.Path(scriptPath),
			CSRF:         e.CSRFToken,
			Message:      refusalText(t, st.Message, a.points),
			Points:       a.points,
			Tolerance:    a.tolerance,
			Action:       e.Path(""),
			CancelAction: e.Path("cancel"),
			Selected:     st.Selected,
		}
		for _, im := range a.images.list {
			d.Images = append(d.Images, imageChoice{Name: im.Name, Title: imageTitle(t, im), URL: e.Path("image/" + im.Name)})
		}
		if a.passkeysOffered(e.Passkeys, e.Origin) {
			d.withPasskey(e.Path(passkeyScriptPath), e.Path(passkeyOptionsPath), e.Path(passkeyPath))
			d.Title = t.Text("enroll.title.passkey")
		}
		a.render(w, r, http.StatusOK, "enroll", d.withTenant(e.Look))
	case e.Rest == "" && r.Method == http.MethodPost:
		a.save(w, r, e)
	case e.Rest == passkeyOptionsPath && r.Method == http.MethodPost:
		a.beginPasskeyEnroll(w, r, e)
	case e.Rest == passkeyPath && r.Method == http.MethodPost:
		a.savePasskey(w, r, e)
	case e.Rest == passkeyOptionsPath || e.Rest == passkeyPath:
		methodNotAllowed(w, "POST")
	case e.Rest == "cancel" && r.Method == http.MethodPost:
		e.Cancel(w, r)
	case e.Rest == "":
		methodNotAllowed(w, "GET, POST")
	case e.Rest == "cancel":
		methodNotAllowed(w, "POST")
	default:
		http.NotFound(w, r)
	}
}

// save checks the points of the enrollment form and stores the credential.
func (a *Authenticator) save(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment) {
	ctx := r.Context()
	name := r.PostFormValue("image")
	refuse := func(msg string) {
		a.log.InfoContext(ctx, "picture enrollment refused", "tenant", e.Tenant, "subject", e.Subject, "reason", msg)
		a.refused(w, r, e, msg, name)
	}
	if a.images.byName[name] == nil {
		refuse("enroll.error.choose")
		return
	}
	points, err1 := ParsePoints(r.PostFormValue("points"), a.points)
	confirm, err2 := ParsePoints(r.PostFormValue("confirm"), a.points)
	if err1 != nil || err2 != nil {
		refuse("enroll.error.points")
		return
	}
	for i, p := range points {
		for _, q := range points[:i] {
			if tooClose(q, p, a.tolerance) {
				refuse("enroll.error.tooclose")
				return
			}
		}
		if abs(confirm[i].X-p.X) > a.tolerance || abs(confirm[i].Y-p.Y) > a.tolerance {
			refuse("enroll.error.mismatch")
			return
		}
	}
	// Of several submits of one enrollment at once (a double click), only the first stores a
	// picture; the others change nothing. (One that comes after it finds the enrollment ended.)
	err := setState(ctx, e, func(st *enrollState) error {
		if st.Storing {
			return errStoring
		}
		st.Storing = true
		return nil
	})
	switch {
	case errors.Is(err, errStoring) || errors.Is(err, store.ErrNotFound):
		a.enrollmentBusy(w, r, e)
		return
	case err != nil:
		a.internal(w, r, err)
		return
	}
	// Only an enrollment that may replace the factor (an administrator's link, or a client's
	// with proof of a recent sign-in) replaces one; the others set up a first factor only.
	had := false
	if e.Replace || a.passkeys != nil {
		var err error
		if had, err = a.HasFactor(ctx, e.Tenant, e.Subject); err != nil {
			a.unclaim(ctx, e)
			a.internal(w, r, err)
			return
		}
	}
	if had && !e.Replace {
		// A passkey the user added since the link was made is a factor too (a picture
		// password is caught by Create below).
		a.log.WarnContext(ctx, "picture enrollment refused: the user has a factor and this enrollment may not replace it",
			"tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID)
		e.Cancel(w, r)
		return
	}
	err = a.enroll(ctx, e.Tenant, e.Subject, name, points, e.Replace)
	switch {
	case errors.Is(err, store.ErrConflict):
		a.log.WarnContext(ctx, "picture enrollment refused: the user has a picture password and this enrollment may not replace it",
			"tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID)
		e.Cancel(w, r)
		return
	case err != nil:
		a.unclaim(ctx, e)
		a.internal(w, r, err)
		return
	case had:
		a.log.WarnContext(ctx, "picture password replaced", "tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID, "image", name)
	default:
		a.log.InfoContext(ctx, "picture password enrolled", "tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID, "image", name)
	}
	// The enrollment ends in the request that stored the picture, so the link cannot store
	// another one and enrollment.completed is recorded whatever the browser does next.
	if e.Done(w, r) {
		return
	}
	// An administrator's link: no application waits for the person. The enrollment has ended,
	// so the page links nothing below its URL (no stylesheet).
	t := a.texts.Match(e.Languages...)
	a.render(w, r, http.StatusOK, "done", (&pageData{T: t, Title: t.Text("done.title"), InlineStyle: inlineStyle}).withTenant(e.Look))
}

// refused sends the browser back to the enrollment page, which says msg (a message key), with
// image chosen again if it is one of the pictures.
func (a *Authenticator) refused(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment, msg, image string) {
	err := setState(r.Context(), e, func(st *enrollState) error {
		st.Message, st.Selected = msg, ""
		if a.images.byName[image] != nil {
			st.Selected = image
		}
		return nil
	})
	if err != nil {
		a.internal(w, r, err)
		return
	}
	http.Redirect(w, r, e.Path(""), http.StatusSeeOther)
}

// refuseEnroll refuses a passkey of an enrollment for reason (logged) and sends the browser
// back to the page, which says msg.
func (a *Authenticator) refuseEnroll(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment, msg, reason string) {
	a.log.InfoContext(r.Context(), "passkey enrollment refused", "tenant", e.Tenant, "subject", e.Subject, "reason", reason)
	a.refused(w, r, e, msg, "")
}

// enrollmentBusy answers a request that found another request of the enrollment storing a
// factor, or the enrollment ended: it changes nothing.
func (a *Authenticator) enrollmentBusy(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment) {
	a.log.InfoContext(r.Context(), "enrollment refused: another request of the enrollment stores a factor",
		"tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID)
	t := a.texts.Match(e.Languages...)
	a.render(w, r, http.StatusBadRequest, "ended", (&pageData{T: t, Title: t.Text("ended.title"),
		Message: t.Text("ended.message")}).withTenant(e.Look))
}

// refusalText is the sentence of the refusal key in the language of t: "" for none.
func refusalText(t *pagetext.Texts, key string, points int) string {
	switch key {
	case "":
		return ""
	case "enroll.error.points":
		return t.Plural(key, points)
	}
	return t.Text(key)
}

// unclaim lets the enrollment store a picture again after a request failed to store one.
func (a *Authenticator) unclaim(ctx context.Context, e *oidc2fa.Enrollment) {
	err := setState(context.WithoutCancel(ctx), e, func(st *enrollState) error { st.Storing = false; return nil })
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		a.log.ErrorContext(ctx, "picture enrollment: clearing the claim failed", "tenant", e.Tenant, "err", err)
	}
}
