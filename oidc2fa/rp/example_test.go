package rp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/oidc2fa/rp"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// An application with a first factor of its own sends the user to the visid second factor and
// takes them back. The provider runs in-process here, with a test authenticator that approves
// everyone; a browser with a cookie jar follows the redirects.
func ExampleNew() {
	app := httptest.NewUnstartedServer(nil)
	defer app.Close()
	callbackURL := "http://" + app.Listener.Addr().String() + "/2fa/callback"
	idp := startDemoProvider(callbackURL)
	defer idp.Close()

	sessions, err := rp.NewServerSessions(rp.ServerSessionsConfig{})
	if err != nil {
		log.Fatal(err)
	}
	second, err := rp.New(context.Background(), rp.Config{
		Issuer:       idp.Issuer,
		ClientID:     idp.ClientID,
		ClientSecret: idp.ClientSecret,
		RedirectURI:  callbackURL,
		Sessions:     sessions,
	})
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		// The first factor (a password, say) has just identified ann.
		target, err := second.AuthCodeURL(w, r, "ann@example.com")
		if err != nil {
			http.Error(w, "the second factor cannot start", http.StatusInternalServerError)
			return
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
	})
	mux.HandleFunc("GET /2fa/callback", func(w http.ResponseWriter, r *http.Request) {
		res, err := second.Callback(r.Context(), w, r)
		var denied *rp.AuthError
		switch {
		case errors.As(err, &denied):
			http.Error(w, "second factor refused: "+denied.Code, http.StatusForbidden)
			return
		case err != nil:
			http.Error(w, "second factor failed", http.StatusBadGateway)
			return
		}
		fmt.Fprintf(w, "welcome %s, second factor %v, subject %s…", res.LoginHint, res.AMR, res.Subject[:5])
	})
	app.Config.Handler = mux
	app.Start()

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(app.URL + "/login")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 welcome ann@example.com, second factor [test], subject user_…
}

func ExampleNewServerSessions() {
	sessions, err := rp.NewServerSessions(rp.ServerSessionsConfig{Secure: true})
	if err != nil {
		log.Fatal(err)
	}
	// AuthCodeURL saves a sign-in; the browser gets a binding cookie.
	login := httptest.NewRecorder()
	err = sessions.Save(login, httptest.NewRequest("GET", "https://app.example.com/login", nil),
		rp.Session{State: "s1", Nonce: "n1", Verifier: strings.Repeat("v", 43), LoginHint: "ann@example.com"})
	if err != nil {
		log.Fatal(err)
	}
	// Callback takes it back, once, in the browser that has the cookie.
	callback := func(withCookie bool) error {
		r := httptest.NewRequest("GET", "https://app.example.com/2fa/callback?state=s1", nil)
		if withCookie {
			for _, c := range login.Result().Cookies() {
				r.AddCookie(c)
			}
		}
		_, err := sessions.Take(httptest.NewRecorder(), r, "s1")
		return err
	}
	fmt.Println("another browser:", errors.Is(callback(false), rp.ErrState))
	fmt.Println("this browser:", callback(true))
	fmt.Println("again:", errors.Is(callback(true), rp.ErrState))
	// Output:
	// another browser: true
	// this browser: <nil>
	// again: true
}

func ExampleNewCookieSessions() {
	key := []byte("a 32-byte key from your secrets!") // 32 random bytes in real life
	sessions, err := rp.NewCookieSessions(rp.CookieSessionsConfig{Key: key, Secure: true})
	if err != nil {
		log.Fatal(err)
	}
	login := httptest.NewRecorder()
	err = sessions.Save(login, httptest.NewRequest("GET", "https://app.example.com/login", nil),
		rp.Session{State: "s1", Nonce: "n1", Verifier: strings.Repeat("v", 43), LoginHint: "ann@example.com"})
	if err != nil {
		log.Fatal(err)
	}
	cookie := login.Result().Cookies()[0]
	fmt.Println("readable:", strings.Contains(cookie.Value, "ann"), "secure:", cookie.Secure, "http-only:", cookie.HttpOnly)

	r := httptest.NewRequest("GET", "https://app.example.com/2fa/callback?state=s1", nil)
	r.AddCookie(cookie)
	s, err := sessions.Take(httptest.NewRecorder(), r, "s1")
	fmt.Println(s.LoginHint, err)
	_, err = sessions.Take(httptest.NewRecorder(), r, "s1")
	fmt.Println("replayed:", errors.Is(err, rp.ErrState))
	// Output:
	// readable: false secure: true http-only: true
	// ann@example.com <nil>
	// replayed: true
}

// demoProvider is an oidc2fa provider in this process: tenant acme, an active user ann, a
// client registered for one redirect URI, and a test authenticator that approves everyone.
type demoProvider struct {
	*httptest.Server
	Issuer, ClientID, ClientSecret string
}

func startDemoProvider(redirectURI string) *demoProvider {
	ctx := context.Background()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + "/oidc"
	b := memstore.New().Backend()
	must(b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	_, err := b.Users.Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true})
	must(err)
	secret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant: "acme", Name: "Example app", RedirectURIs: []string{redirectURI}})
	must(err)
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	must(err)
	provider, err := oidc2fa.New(oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Authenticator: &authtest.Authenticator{AutoApprove: true}, Signer: keys, BaseURL: base,
		Logger: slog.New(slog.DiscardHandler),
	})
	must(err)
	mux := http.NewServeMux()
	mux.Handle("/oidc/", http.StripPrefix("/oidc", provider))
	srv.Config.Handler = mux
	srv.Start()
	return &demoProvider{Server: srv, Issuer: base + "/acme", ClientID: client.ID, ClientSecret: secret}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// The strongest binding of the second factor to the first: the visid id stored with the user at
// the first sign-in, compared with every later token's sub.
func ExampleResult_CheckSubject() {
	storedID := "user_01jdx4k3v0h8w2m6t9q5r7y1zc"                 // kept with the user at the first sign-in
	res := &rp.Result{Subject: "user_01jdx4k3v0h8w2m6t9q5r7y1zc"} // from Callback
	fmt.Println(res.CheckSubject(storedID))
	other := &rp.Result{Subject: "user_01jdx5aaaaaaaaaaaaaaaaaaaa"}
	fmt.Println(errors.Is(other.CheckSubject(storedID), rp.ErrWrongUser))
	// Output:
	// <nil>
	// true
}
