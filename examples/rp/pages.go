package main

import (
	"bytes"
	_ "embed"
	"html/template"
	"log/slog"
	"net/http"
	"time"
)

//go:embed pages.html
var pagesHTML string

// pages are the application's HTML pages; html/template escapes every value.
type pages struct {
	tmpl *template.Template
	// csp is the Content-Security-Policy of every page. Its form-action lets the login form's
	// answer redirect to visid: browsers apply form-action to the redirects of a submission.
	csp string
	log *slog.Logger
}

func newPages(issuerOrigin string, log *slog.Logger) *pages {
	return &pages{
		tmpl: template.Must(template.New("pages").Parse(pagesHTML)),
		csp: "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'; " +
			"form-action 'self' " + issuerOrigin,
		log: log,
	}
}

// loginPage is the password form.
type loginPage struct {
	CSRF         string
	Email        string // filled in again after a mistake
	Error        string
	DemoEmail    string
	DemoPassword string
}

// signedInPage shows a user who passed both factors.
type signedInPage struct {
	CSRF     string
	Email    string
	Subject  string
	AuthTime string
	AMR      []string
}

// problemPage explains why a sign-in did not finish, with a link to start again.
type problemPage struct {
	Title   string
	Message string
}

// render writes the page name with data and the headers every page has: never cached (pages
// show the session), never framed, never sending a Referer (the callback's URL holds a code).
func (p *pages) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		p.log.ErrorContext(r.Context(), "rendering a page", "page", name, "err", err)
		http.Error(w, "Something went wrong.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", p.csp)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// login renders the password form of session s.
func (p *pages) login(w http.ResponseWriter, r *http.Request, status int, s session, email, problem string) {
	p.render(w, r, status, "login", loginPage{
		CSRF: s.CSRF, Email: email, Error: problem, DemoEmail: demoEmail, DemoPassword: demoPassword,
	})
}

// signedIn renders the page of a session that passed both factors.
func (p *pages) signedIn(w http.ResponseWriter, r *http.Request, s session) {
	authTime := "not given"
	if !s.Second.AuthTime.IsZero() {
		authTime = s.Second.AuthTime.UTC().Format(time.RFC3339)
	}
	p.render(w, r, http.StatusOK, "signed-in", signedInPage{
		CSRF: s.CSRF, Email: s.Email, Subject: s.Second.Subject, AuthTime: authTime, AMR: s.Second.AMR,
	})
}

// enrolled renders the page after visid set up the picture password: a person who set up a
// first one is not signed in, and signs in to use it; one who changed it stays signed in.
func (p *pages) enrolled(w http.ResponseWriter, r *http.Request, signedIn bool) {
	p.render(w, r, http.StatusOK, "enrolled", struct{ SignedIn bool }{signedIn})
}

// problem renders a page that explains a failure and links to the start.
func (p *pages) problem(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	p.render(w, r, status, "problem", problemPage{Title: title, Message: message})
}
