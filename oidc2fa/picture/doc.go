// Package picture is visid's image-based login: a picture password as the second factor of
// oidc2fa, with its enrollment pages. *Authenticator implements oidc2fa.Authenticator and
// oidc2fa.Enroller.
//
// # The scheme
//
// A user enrolls one image and a sequence of points on it (Config.Points, default 5). Every
// image is shown scaled to a canonical space of Width × Height (1000 × 750) units, and points
// are integers in that space. A later click is accepted when it lies within r
// (Config.Tolerance, default 20) units of the enrolled point on each axis, by centered
// discretization (Chiasson, Forget, Biddle and van Oorschot, 2008): per axis the offset
// d = (x − r) mod (2r + 1) is stored in the clear, and the cell index (x − d) / (2r + 1) is what
// gets hashed. With the defaults a cell is 41 units wide, 24 × 18 cells cover the image, and a
// point carries about 8.75 bits; five points about 44 bits against guessing in the dark, much
// less against an attacker who knows which spots of an image people like. That is why the
// factor locks after Config.MaxFailures (default 5) wrong attempts in a row and why it is a
// second factor, not a password.
//
// The hash input is the cell indices with the tenant, the user id, the SHA-256 of the image,
// the number of points and r, keyed with a server-side pepper (HMAC-SHA-256; Config.Peppers,
// rotatable by id) and then hashed with argon2id (Config.Argon2, default 2 passes over 19 MiB)
// and a random salt. Records carry a scheme version, the pepper id and their argon2id
// parameters; a successful login with older ones rehashes. Hashes are compared in constant
// time, and at most Config.MaxConcurrentHashes argon2id computations run at once. Points are
// never stored in the clear and never logged.
//
// Failures are counted in the store (store.PictureCredentials) per user and per source network,
// the /24 or /48 (Config.IPv4PrefixLen, IPv6PrefixLen) of oidc2fa.Login.ClientAddr, what one
// party gets cheaply, before the points are checked, so the counts are shared by every instance and cannot be raced past. A
// lock shuts out one network and backs off: the MaxFailures-th failure in a row from a network
// locks the factor for that network for Config.LockBase (default 1 minute) from that failure,
// and each further failure from it (attempts during a lock count too) doubles it, up to
// Config.LockMax (default 24 hours). So someone who knows only a user's name locks only their
// own network, not the user. Failures from Config.UserLockNetworks networks (default 5) since
// the user's last success lock the factor for every network but the familiar ones, the
// user-wide lock, for
// Config.UserLockBase (default 1 hour) from the user's latest failure, doubled by each further
// network up to Config.UserLockMax (default 24 hours): a guess spread over many addresses gets
// one checked attempt per lock. While a lock lasts the right points are refused like wrong ones;
// when it has ended, of several attempts sent at once only the first counted is checked. A
// familiar network, as in Entra ID's smart lockout, is one of the Config.FamiliarNetworks
// (default 8) networks the user most recently passed from, within Config.FamiliarFor (default
// 30 days): the user-wide lock leaves it open, and only its own failures lock it. A success
// resets its network's count and the user-wide count (a familiar network's success while the
// user-wide lock holds leaves that lock to the others); enrolling again or
// Authenticator.Unlock (an administrator's) ends every lock, Authenticator.Locks lists the
// locks in force and Authenticator.FamiliarNetworks the familiar networks. Behind a load balancer, the provider must know its proxies
// (oidc2fa.Config.TrustedProxies), or every user shares the balancer's network.
//
// Every sign-in gets MaxFailures attempts, whatever the user's stored count. A wrong picture, an
// unknown, inactive or unenrolled user and a locked user look the same to the person: the same
// page (an image chosen by a keyed hash of the login hint, folded as the store folds userNames,
// when there is no credential), the same message, the same number of attempts, one argon2id
// computation each; the log says which it was.
//
// Enrollment through a client's link sets up a first picture password only
// (PictureCredentials.Create); replacing one needs an administrator's link or a client's proof of
// a recent sign-in with the current factor (oidc2fa.Enrollment.Replace), and is logged at Warn.
//
// # Keyboard, screen readers and touch screens
//
// The picture takes keyboard focus. The arrow keys move a cross over it (10 units a press, 50
// with Shift), Enter or Space places a point at the cross, and Backspace removes the last one;
// the same on the enrollment pages. The cross moves in canonical units, so a point placed with
// it is the same whole numbers a click there gives. Once the last point is placed with the
// keyboard, the focus moves to the button that sends the form, and the button right before it,
// "Undo last point", removes the last point as Backspace does ("Start over", which removes them
// all, comes before it). The picture names its instructions, keyboard use included, with
// aria-describedby; on screens narrower than 560 CSS pixels the keyboard instructions are shown
// only while the picture has keyboard focus. The count of points and notices ("Point 2 placed.",
// "Removed the last point.") are live regions. Every sentence the script shows or announces is
// in the page, in a JSON block (id "picture-text") next to the page's other strings. Where the cross is, is never
// announced: a screen reader would say the secret aloud.
//
// On a touch screen a tap shows a ring where it landed and counts only once the person presses
// "Use this point" (or taps again to move it), so a fingertip that covers the spot does not
// spend an attempt; the ring is gone once the point is taken, and placed points are never
// shown, neither on the page nor after a reload. On screens narrower than 560 CSS pixels the
// picture spans the whole width. The tolerance stays Config.Tolerance whatever the size shown.
//
// A picture password needs sight: these keys let people who see the picture but cannot use a
// pointer sign in, not people who cannot see it. For them, and for everyone a memory test keeps
// out (WCAG 2.2 SC 3.3.8), a tenant allows passkeys (see Passkeys below).
//
// # Passkeys
//
// With Config.Passkeys set, a tenant whose policy allows it (store.Tenant.SecondFactor
// "picture-or-passkey", oidc2fa.Login.Passkeys) offers a passkey (WebAuthn, through
// github.com/go-webauthn/webauthn) as the other way through the same sign-in: "Use a passkey"
// above the picture (the passkey alone to a user who has no picture password), and "Add a
// passkey" on the enrollment pages, with the same proof as a picture password. The relying
// party is the provider's origin (oidc2fa.Login.Origin), whose host must be a domain. The
// browser is asked for a discoverable credential with user verification required; a sign-in
// names no credential, so the page does not say which users hold passkeys. Each challenge
// lives in the interaction's state and is taken by the one request that answers it; the
// passkey must be one the sign-in's user holds, its backup-eligible flag unchanged and its
// counter moved forward, and the new counter is stored only if no other answer stored one
// meanwhile (store.Passkeys.Use). A passkey attempt of a user with a picture password goes
// through the picture's lock (counted first, refused while locked, a success resets); every
// refusal looks like a wrong picture. The amr is "hwk" or "swk" (backup eligible) with "mfa".
// Below a login or enrollment URL: POST passkey/options answers the options of a fresh
// challenge as JSON, and POST passkey takes the browser's answer in the field "credential"
// (static/passkey.js does both). The guide is docs/passkeys.md.
//
// # The pages and their form fields
//
// The pages are plain HTML with one small script and one style sheet, served with a
// Content-Security-Policy that allows only those and the images (the page after an
// administrator's enrollment link, served once the enrollment has ended, carries the style sheet
// inline, allowed by its hash; a tenant's accent colour is a <style> element allowed by its
// hash too, see oidc2fa.TenantLook), frame-ancestors 'none',
// Referrer-Policy no-referrer and Cache-Control no-store. A host with its own front end, or an
// automated test, can drive them with plain form POSTs (paths relative to the login or
// enrollment URL the provider gives):
//
//   - Login: POST "" with the fields csrf (oidc2fa.CSRFField: the token of the page's form) and
//     points, the clicked points in order as "x1,y1;x2,y2;…" in canonical units. A wrong
//     attempt answers 303 back to the page, which then says "That did not match. Try again.";
//     success or the end of the attempts answers 303 to the application. POST "cancel" with csrf
//     gives up. GET "image" is the picture to click on.
//   - Enrollment: POST "" with csrf, image (the name of the chosen image), points and confirm
//     (the same points clicked a second time, each within r of the first). Two points in the
//     same or a neighbouring cell are refused. GET "image/{name}" is each image.
//
// # Wiring
//
//	auth, err := picture.New(picture.Config{
//		Credentials: b.Pictures,
//		Peppers:     []picture.Pepper{{ID: "2026-11", Key: pepperKey}}, // 32+ secret bytes
//	})
//	if err != nil {
//		return err
//	}
//	provider, err := oidc2fa.New(oidc2fa.Config{
//		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
//		Authenticator: auth,
//		Signer:        keys,
//		BaseURL:       "https://id.example.com/oidc",
//	})
//
// There b is a store.Backend (memstore.New().Backend(), or sqlstore's Store.Backend), pepperKey
// 32 or more secret bytes kept outside the store, the same on every instance, and keys the
// provider's oidc2fa.Signer (oidc2fa.NewKeyRing). A program seeds a picture password with
// Authenticator.Enroll (see the example of New).
//
// Users enroll through a one-time link: the relying application's backend asks for one at
// POST {BaseURL}/enroll/{tenant} (oidc2fa/rp's EnrollURL does it), or an administrator makes one
// with oidc2fa.NewEnrollmentLink.
//
// # Languages
//
// Every sentence of the pages, those picture.js shows and announces included, is a message of
// the page's language: English, German, French, Spanish or Japanese, chosen by the provider's
// rules (oidc2fa.Login.Languages: ui_locales, Accept-Language, the tenant's default). Numbers
// take their language's plural form (golang.org/x/text/feature/plural on the server,
// Intl.PluralRules in picture.js), and the built-in images have a title in each language.
// Config.Languages adds a language or changes texts, as oidc2fa.Config.Languages does for the
// provider's pages (BuiltinCatalogs lists the keys); "image.<name>" gives the title of any
// image of Config.Images in a language.
//
// # Metrics and traces
//
// The login reports through the OpenTelemetry API to Config.MeterProvider and
// Config.TracerProvider (nil: the global providers, which record nothing until the host
// installs an SDK): attempts by outcome (MetricAttempts), lockouts (MetricLockouts), argon2id
// computations in flight (MetricHashesInFlight) and the wait for a slot (MetricHashWait), and a
// span per argon2id computation. No metric or span names a user or carries a point.
//
// The guide to the picture login, the smart lockout and enrollment is https://github.com/visid/visid/blob/main/docs/picture-login.md.
package picture
