// Package authtest is an oidc2fa.Authenticator and oidc2fa.Enroller for tests only: it proves
// nothing about the person at the browser and stores no factor. Never use it in a service.
//
// Its login page shows the hinted user and three buttons, "Approve", "Deny" and "Cancel", posted
// with the interaction's CSRF token; with AutoApprove it approves on the first visit without a
// page, so a test can follow redirects straight from the authorization request to the client's
// callback.
//
// Its enrollment page names the user who enrolls and shows two buttons, "Enroll" and "Cancel",
// posted with the enrollment's CSRF token (AutoApprove does not apply to it). Enroll calls
// OnEnroll, if set, and finishes the enrollment: the browser goes back to the client, or, for an
// administrator's link without a client, sees a page saying "Enrolled.". Cancel ends the
// enrollment without a factor.
//
// The second factor and its Authenticator seam are described in https://github.com/visid/visid/blob/main/docs/second-factor.md.
package authtest

import (
	"context"
	"html/template"
	"net/http"
	"time"

	"github.com/visid/visid/oidc2fa"
)

// LockFor is how long the decision "lock" says the factor is locked (Login.FailLocked).
const LockFor = time.Hour

// Authenticator approves or denies as the test asks, and enrolls whoever presses Enroll.
type Authenticator struct {
	// AutoApprove approves the hinted user on the first visit, without a page.
	AutoApprove bool
	// Methods are reported as Success.Methods. nil: []string{"test"}.
	Methods []string
	// Now gives Success.AuthTime. nil: time.Now.
	Now func() time.Time
	// Subject, when set, is reported instead of the hinted user, to test that the provider
	// refuses another subject.
	Subject string
	// OnEnroll, when set, is called with the tenant and the subject (the user's id) when the
	// person presses Enroll, before the enrollment is finished: where a real enroller would
	// store the factor. It runs on the request's goroutine, so it must be safe for concurrent
	// use when the provider serves several requests at once. nil: nothing is called.
	OnEnroll func(tenant, subject string)
	// Enrolled answers HasFactor (oidc2fa.FactorChecker): whether the user has the factor, so
	// that a client needs proof of a recent sign-in to replace it. An enrollment that may not
	// replace (Enrollment.Replace false) of a user Enrolled reports is cancelled when the person
	// presses Enroll. nil: no user has the factor.
	Enrolled func(tenant, subject string) bool
}

var (
	_ oidc2fa.Authenticator = (*Authenticator)(nil)
	_ oidc2fa.Enroller      = (*Authenticator)(nil)
	_ oidc2fa.FactorChecker = (*Authenticator)(nil)
)

// HasFactor implements oidc2fa.FactorChecker with Enrolled.
func (a *Authenticator) HasFactor(_ context.Context, tenant, subject string) (bool, error) {
	return a.Enrolled != nil && a.Enrolled(tenant, subject), nil
}

var page = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test login</title></head><body>
<h1>Test login for {{.Client}}</h1>
<p>User: {{.User}}</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="{{.Field}}" value="{{.CSRF}}">
<button name="decision" value="approve">Approve</button>
<button name="decision" value="deny">Deny</button>
<button name="decision" value="cancel">Cancel</button>
<button name="decision" value="lock">Lock</button>
</form></body></html>
`))

// ServeLogin implements oidc2fa.Authenticator.
func (a *Authenticator) ServeLogin(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login) {
	if r.Method == http.MethodPost || a.AutoApprove {
		decision := r.PostFormValue("decision")
		if a.AutoApprove {
			decision = "approve"
		}
		switch {
		case decision == "cancel":
			l.Fail(w, r, oidc2fa.Cancelled)
		case decision == "lock":
			l.FailLocked(w, r, a.now().Add(LockFor))
		case decision != "approve" || l.User == nil || !l.User.Active:
			l.Fail(w, r, oidc2fa.Denied)
		default:
			a.approve(w, r, l)
		}
		return
	}
	// The page names the user as the client hinted, so it looks the same whether or not the
	// user exists.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, map[string]string{
		"Client": l.Client.Name, "User": l.LoginHint, "Action": l.Path(""),
		"Field": oidc2fa.CSRFField, "CSRF": l.CSRFToken,
	})
}

// now is the Authenticator's clock.
func (a *Authenticator) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Authenticator) approve(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login) {
	now := a.now
	methods := a.Methods
	if methods == nil {
		methods = []string{"test"}
	}
	subject := l.Subject
	if a.Subject != "" {
		subject = a.Subject
	}
	l.Succeed(w, r, oidc2fa.Success{Subject: subject, AuthTime: now(), Methods: methods})
}

var enrollPage = template.Must(template.New("enroll").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test enrollment</title></head><body>
<h1>Test enrollment{{if .Client}} for {{.Client}}{{end}}</h1>
<p>User: {{.User}}</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="{{.Field}}" value="{{.CSRF}}">
<button name="decision" value="enroll">Enroll</button>
<button name="decision" value="cancel">Cancel</button>
</form></body></html>
`))

var enrolledPage = []byte(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test enrollment</title></head><body>
<p>Enrolled.</p>
</body></html>
`)

// ServeEnroll implements oidc2fa.Enroller.
func (a *Authenticator) ServeEnroll(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment) {
	if r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = enrollPage.Execute(w, map[string]string{
			"Client": e.Client.Name, "User": e.User.UserName, "Action": e.Path(""),
			"Field": oidc2fa.CSRFField, "CSRF": e.CSRFToken,
		})
		return
	}
	if r.PostFormValue("decision") != "enroll" || !e.Replace && a.Enrolled != nil && a.Enrolled(e.Tenant, e.Subject) {
		e.Cancel(w, r)
		return
	}
	if a.OnEnroll != nil {
		a.OnEnroll(e.Tenant, e.Subject)
	}
	if !e.Done(w, r) {
		// No client to go back to (an administrator's link): answer with a page of our own.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(enrolledPage)
	}
}
