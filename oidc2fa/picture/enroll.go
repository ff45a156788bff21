package picture

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// enrollState is what the enrollment pages keep in the interaction between requests. It never
// holds points: they travel only in the final POST.
type enrollState struct {
	Message  string `json:"m,omitempty"` // why the last POST was refused
	Selected string `json:"s,omitempty"` // the image the person had chosen
	Done     bool   `json:"d,omitempty"` // enrolled; the done page ends the enrollment
}

// ServeEnroll implements oidc2fa.Enroller. Below the enrollment URL it serves:
//
//	GET  ""                    the page: choose a picture, click the points, click them again
//	POST ""                    fields csrf, image, points and confirm ("x1,y1;x2,y2;…")
//	GET  image/{name}          a picture
//	POST cancel                the person gives up (field csrf)
//	GET  done                  the last page, when no application waits for the person
//	GET  static/picture.js, static/picture.css
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
		d := &pageData{
			Title:        "Set up your picture password",
			ClientName:   e.Client.Name,
			StyleURL:     e.Path(stylePath),
			ScriptURL:    e.Path(scriptPath),
			CSRF:         e.CSRFToken,
			Message:      st.Message,
			Points:       a.points,
			Tolerance:    a.tolerance,
			Action:       e.Path(""),
			CancelAction: e.Path("cancel"),
			Selected:     st.Selected,
		}
		for _, im := range a.images.list {
			d.Images = append(d.Images, imageChoice{Name: im.Name, Title: im.Title, URL: e.Path("image/" + im.Name)})
		}
		a.render(w, r, http.StatusOK, "enroll", d)
	case e.Rest == "" && r.Method == http.MethodPost:
		a.save(w, r, e, st)
	case e.Rest == "cancel" && r.Method == http.MethodPost:
		e.Cancel(w, r)
	case e.Rest == "done" && r.Method == http.MethodGet && st.Done:
		if e.Done(w, r) {
			return
		}
		if e.Client.ID == "" {
			a.render(w, r, http.StatusOK, "done", &pageData{Title: "Picture password ready", InlineStyle: inlineStyle})
		}
	case e.Rest == "":
		methodNotAllowed(w, "GET, POST")
	case e.Rest == "cancel":
		methodNotAllowed(w, "POST")
	default:
		http.NotFound(w, r)
	}
}

// save checks the points of the enrollment form and stores the credential.
func (a *Authenticator) save(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment, st enrollState) {
	ctx := r.Context()
	name := r.PostFormValue("image")
	refuse := func(msg string) {
		a.log.InfoContext(ctx, "picture enrollment refused", "tenant", e.Tenant, "subject", e.Subject, "reason", msg)
		st = enrollState{Message: msg}
		if a.images.byName[name] != nil {
			st.Selected = name
		}
		state, _ := json.Marshal(st)
		if err := e.SaveState(ctx, state); err != nil {
			a.internal(w, r, err)
			return
		}
		http.Redirect(w, r, e.Path(""), http.StatusSeeOther)
	}
	if a.images.byName[name] == nil {
		refuse("Choose one of the pictures.")
		return
	}
	points, err1 := ParsePoints(r.PostFormValue("points"), a.points)
	confirm, err2 := ParsePoints(r.PostFormValue("confirm"), a.points)
	if err1 != nil || err2 != nil {
		refuse(fmt.Sprintf("Tap or click %d points on the picture, then the same %d points again.", a.points, a.points))
		return
	}
	for i, p := range points {
		for _, q := range points[:i] {
			if tooClose(q, p, a.tolerance) {
				refuse("Two of your points are too close together. Choose details farther apart.")
				return
			}
		}
		if abs(confirm[i].X-p.X) > a.tolerance || abs(confirm[i].Y-p.Y) > a.tolerance {
			refuse("The second round did not match the first. Start again.")
			return
		}
	}
	// Only an enrollment that may replace the factor (an administrator's link, or a client's
	// with proof of a recent sign-in) replaces one; the others set up a first factor only.
	had := false
	if e.Replace {
		var err error
		if had, err = a.HasFactor(ctx, e.Tenant, e.Subject); err != nil {
			a.internal(w, r, err)
			return
		}
	}
	err := a.enroll(ctx, e.Tenant, e.Subject, name, points, e.Replace)
	switch {
	case errors.Is(err, store.ErrConflict):
		a.log.WarnContext(ctx, "picture enrollment refused: the user has a picture password and this enrollment may not replace it",
			"tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID)
		e.Cancel(w, r)
		return
	case err != nil:
		a.internal(w, r, err)
		return
	case had:
		a.log.WarnContext(ctx, "picture password replaced", "tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID, "image", name)
	default:
		a.log.InfoContext(ctx, "picture password enrolled", "tenant", e.Tenant, "subject", e.Subject, "client", e.Client.ID, "image", name)
	}
	if e.Client.ID != "" {
		e.Done(w, r)
		return
	}
	state, _ := json.Marshal(enrollState{Done: true})
	if err := e.SaveState(ctx, state); err != nil {
		a.internal(w, r, err)
		return
	}
	http.Redirect(w, r, e.Path("done"), http.StatusSeeOther)
}
