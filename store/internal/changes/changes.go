// Package changes turns the writes a store makes with a store.Change in their context into
// the events of its log: which events a write records, and their data. Every backend uses it,
// so they all record the same events for the same change.
package changes

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/stamp"
)

// Pending collects the events of one write, to be stored with it. A nil *Pending collects
// nothing: the write's context carries no Change.
type Pending struct {
	change *store.Change
	tenant string
	events []store.Event
	first  [1]store.Event // events' array while a write has one event, as most have
}

// New returns the collector of a write to tenant with ctx, or nil when ctx carries no Change.
func New(ctx context.Context, tenant string) *Pending {
	c := store.ChangeOf(ctx)
	if c == nil {
		return nil
	}
	p := &Pending{change: c, tenant: tenant}
	p.events = p.first[:0]
	return p
}

// Tenant is the tenant whose log p's events go to.
func (p *Pending) Tenant() string { return p.tenant }

// Add collects an event about resource (a *store.User or *store.Group as the store returns
// it), whose data Change.Render gives.
func (p *Pending) Add(typ store.EventType, kind, id string, resource any) error {
	if p == nil {
		return nil
	}
	var data json.RawMessage
	if p.change.Render != nil {
		var err error
		if data, err = p.change.Render(resource); err != nil {
			return fmt.Errorf("rendering the data of a %s event: %w", typ, err)
		}
	}
	if data == nil {
		var err error
		if data, err = json.Marshal(resource); err != nil {
			return fmt.Errorf("the data of a %s event: %w", typ, err)
		}
	}
	p.add(typ, kind, id, data)
	return nil
}

// Member collects a member event of group for user.
func (p *Pending) Member(typ store.EventType, group, user string) {
	if p == nil {
		return
	}
	data, _ := json.Marshal(map[string]string{"group": group, "user": user}) // cannot fail
	p.add(typ, store.SubjectGroup, group, data)
}

func (p *Pending) add(typ store.EventType, kind, id string, data json.RawMessage) {
	p.events = append(p.events, store.Event{Tenant: p.tenant, Type: typ, Actor: p.change.Actor,
		SubjectKind: kind, SubjectID: id, Data: data})
}

// Events returns the collected events, each with its time: Change.Time, or now() when that is
// zero, in UTC. Cursors are the store's to set.
func (p *Pending) Events(now func() time.Time) []store.Event {
	if p == nil || len(p.events) == 0 {
		return nil
	}
	at := p.change.Time
	if at.IsZero() {
		at = now()
	}
	for i := range p.events {
		p.events[i].Time = at.UTC()
	}
	return p.events
}

// User collects the events of an update from the user before and after it: user.updated when
// anything but active, groups and meta changed, and user.deactivated or user.reactivated when
// active did. A change of nothing collects nothing.
func User(p *Pending, before, after *store.User) error {
	if p == nil {
		return nil
	}
	b := *before
	b.Active = after.Active
	if !stamp.SameUser(&b, after) { // Meta and Groups are not compared
		if err := p.Add(store.EventUserUpdated, store.SubjectUser, after.ID, after); err != nil {
			return err
		}
	}
	switch {
	case before.Active && !after.Active:
		return p.Add(store.EventUserDeactivated, store.SubjectUser, after.ID, after)
	case !before.Active && after.Active:
		return p.Add(store.EventUserReactivated, store.SubjectUser, after.ID, after)
	}
	return nil
}

// Group collects the events of an update from the group before and after it: group.updated
// when anything but the members and meta changed, then one group.member_added or
// group.member_removed a user whose membership changed.
func Group(p *Pending, before, after *store.Group) error {
	if p == nil {
		return nil
	}
	b, a := *before, *after
	b.Members, a.Members, b.Meta, a.Meta = nil, nil, store.Meta{}, store.Meta{}
	if !reflect.DeepEqual(b, a) {
		if err := p.Add(store.EventGroupUpdated, store.SubjectGroup, after.ID, after); err != nil {
			return err
		}
	}
	was := make(map[string]bool, len(before.Members))
	for _, m := range before.Members {
		was[m.Value] = true
	}
	for _, m := range after.Members {
		if was[m.Value] {
			delete(was, m.Value)
			continue
		}
		p.Member(store.EventGroupMemberAdded, after.ID, m.Value)
	}
	for _, m := range before.Members {
		if was[m.Value] {
			p.Member(store.EventGroupMemberRemoved, after.ID, m.Value)
		}
	}
	return nil
}

// cursorDigits is the width of a cursor: an event's number in its tenant's log in hex,
// zero-padded, so that cursors order as strings as the numbers do.
const cursorDigits = 16

// FormatCursor returns the cursor of a tenant's event number seq (from 1).
func FormatCursor(seq int64) string {
	return fmt.Sprintf("%0*x", cursorDigits, seq)
}

// ParseCursor returns the event number of cursor c, 0 for "" (the start of the log), or an
// error wrapping store.ErrInvalid.
func ParseCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(c, 16, 64)
	if len(c) != cursorDigits || err != nil || n < 1 {
		return 0, fmt.Errorf("event cursor %q: %w", c, store.ErrInvalid)
	}
	return n, nil
}

// Webhook collects webhook.failing when the delivery d saved for endpoint e gives up where it
// had not: its data names the endpoint and the failure, never the secret.
func Webhook(p *Pending, e *store.WebhookEndpoint, d store.WebhookDelivery) {
	if p == nil || !d.Failing || e.Delivery.Failing {
		return
	}
	data, _ := json.Marshal(struct { // cannot fail
		ID        string `json:"id"`
		URL       string `json:"url"`
		Cursor    string `json:"cursor"`
		Attempts  int    `json:"attempts"`
		LastError string `json:"lastError"`
	}{e.ID, e.URL, d.Cursor, d.Attempts, d.LastError})
	p.add(store.EventWebhookFailing, store.SubjectWebhook, e.ID, data)
}

// Appended checks the events of Events.Append and returns them ready to store: tenant set,
// Time in UTC (now() when zero), Cursor cleared. The error wraps store.ErrInvalid.
func Appended(tenant string, events []store.Event, now func() time.Time) ([]store.Event, error) {
	out := make([]store.Event, len(events))
	for i, e := range events {
		if e.Type == "" || e.Actor == "" || e.SubjectKind == "" || e.SubjectID == "" {
			return nil, fmt.Errorf("event %d lacks its type, actor or subject: %w", i, store.ErrInvalid)
		}
		if len(e.Data) == 0 {
			e.Data = json.RawMessage("null")
		} else if !json.Valid(e.Data) {
			return nil, fmt.Errorf("event %d: its data is not JSON: %w", i, store.ErrInvalid)
		}
		if e.Time.IsZero() {
			e.Time = now()
		}
		e.Tenant, e.Cursor, e.Time = tenant, "", e.Time.UTC()
		e.Data = append(json.RawMessage(nil), e.Data...)
		out[i] = e
	}
	return out, nil
}

// Unlocked collects secondfactor.unlocked for the user whose failure count, failures, a write
// resets, when it was above zero.
func Unlocked(p *Pending, userID string, failures int) {
	if p == nil || failures == 0 {
		return
	}
	data, _ := json.Marshal(map[string]int{"failures": failures}) // cannot fail
	p.add(store.EventSecondFactorUnlocked, store.SubjectUser, userID, data)
}

// PasskeyRemoved collects secondfactor.passkey_removed for the passkey k a write deletes: its
// credential id (base64url) and name, never its public key.
func PasskeyRemoved(p *Pending, k *store.Passkey) {
	if p == nil {
		return
	}
	data, _ := json.Marshal(map[string]string{"passkey": base64.RawURLEncoding.EncodeToString(k.ID), "name": k.Name}) // cannot fail
	p.add(store.EventPasskeyRemoved, store.SubjectUser, k.UserID, data)
}

// clientData is a client as its events show it: never the secret's hash.
type clientData struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Description   string    `json:"description,omitempty"`
	RedirectURIs  []string  `json:"redirect_uris"`
	RequirePAR    bool      `json:"require_par"`
	IDTokenAlg    string    `json:"id_token_signed_response_alg,omitempty"`
	AccessToken   bool      `json:"access_token,omitempty"`
	Created       time.Time `json:"created"`
	SecretRotated time.Time `json:"secret_rotated"`
}

// Client collects the events of a write of a client: client.created (before nil),
// client.deleted (after nil), or for an update client.secret_rotated when the secret changed
// and client.updated when anything else did.
func Client(p *Pending, before, after *store.Client) {
	if p == nil {
		return
	}
	add := func(typ store.EventType, c *store.Client) {
		data, _ := json.Marshal(clientData{c.ID, c.Name, c.Description, c.RedirectURIs, c.RequirePAR, c.IDTokenAlg, c.AccessToken, c.Created.UTC(), c.SecretRotated.UTC()})
		p.add(typ, store.SubjectClient, c.ID, data)
	}
	switch {
	case before == nil:
		add(store.EventClientCreated, after)
	case after == nil:
		add(store.EventClientDeleted, before)
	default:
		if before.SecretHash != after.SecretHash {
			add(store.EventClientSecretRotated, after)
		}
		b, a := *before, *after
		b.SecretHash, b.SecretRotated = a.SecretHash, a.SecretRotated
		if !reflect.DeepEqual(b, a) {
			add(store.EventClientUpdated, after)
		}
	}
}

// APIKey returns the collectors of an API key event: one for each tenant the key may act on,
// each holding the event of typ. None when ctx carries no Change.
func APIKey(ctx context.Context, typ store.EventType, k *store.APIKey) []*Pending {
	if store.ChangeOf(ctx) == nil {
		return nil
	}
	data, _ := json.Marshal(struct { // cannot fail
		ID        string    `json:"id"`
		Name      string    `json:"name"`
		Tenants   []string  `json:"tenants"`
		Scopes    []string  `json:"scopes"`
		Created   time.Time `json:"created"`
		RevokedAt time.Time `json:"revoked_at,omitzero"`
	}{k.ID, k.Name, k.Tenants, k.Scopes, k.Created.UTC(), k.RevokedAt.UTC()})
	var out []*Pending
	for i, tenant := range k.Tenants {
		if slices.Contains(k.Tenants[:i], tenant) {
			continue
		}
		p := New(ctx, tenant)
		p.add(typ, store.SubjectAPIKey, k.ID, data)
		out = append(out, p)
	}
	return out
}

// ListFrom checks the arguments of Events.List and returns the number of the event after
// which the page starts: 0 for after "" (the start of the log). Its error wraps
// store.ErrInvalid.
func ListFrom(after string, limit int) (int64, error) {
	if limit < 1 {
		return 0, fmt.Errorf("event list limit %d: %w", limit, store.ErrInvalid)
	}
	return ParseCursor(after)
}

// tenantData is a tenant as its events show it: the logo as its type, size and SHA-256, never
// its bytes.
type tenantData struct {
	ID              string   `json:"id"`
	DisplayName     string   `json:"display_name"`
	LogoType        string   `json:"logo_type,omitempty"`
	LogoSize        int      `json:"logo_size,omitempty"`
	LogoSHA256      string   `json:"logo_sha256,omitempty"`
	AccentColor     string   `json:"accent_color,omitempty"`
	DefaultLanguage string   `json:"default_language,omitempty"`
	SecondFactor    string   `json:"second_factor"` // the policy; "picture" for ""
	Changed         []string `json:"changed"`
}

// Tenant collects tenant.updated for an update of a tenant from before to after, when its
// display name, look or second-factor policy changed; its data names the changed fields.
func Tenant(p *Pending, before, after *store.Tenant) {
	if p == nil {
		return
	}
	var changed []string
	if before.DisplayName != after.DisplayName {
		changed = append(changed, "display_name")
	}
	if before.LogoHash != after.LogoHash || before.LogoType != after.LogoType {
		changed = append(changed, "logo")
	}
	if before.AccentColor != after.AccentColor {
		changed = append(changed, "accent_color")
	}
	if before.DefaultLanguage != after.DefaultLanguage {
		changed = append(changed, "default_language")
	}
	if before.SecondFactor != after.SecondFactor {
		changed = append(changed, "second_factor")
	}
	if len(changed) == 0 {
		return
	}
	d := tenantData{ID: after.ID, DisplayName: after.DisplayName, AccentColor: after.AccentColor,
		DefaultLanguage: after.DefaultLanguage, SecondFactor: after.SecondFactor, Changed: changed}
	if d.SecondFactor == "" {
		d.SecondFactor = store.SecondFactorPicture
	}
	if len(after.Logo) > 0 {
		d.LogoType, d.LogoSize, d.LogoSHA256 = after.LogoType, len(after.Logo), hex.EncodeToString(after.LogoHash[:])
	}
	data, _ := json.Marshal(d) // cannot fail
	p.add(store.EventTenantUpdated, store.SubjectTenant, after.ID, data)
}
