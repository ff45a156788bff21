package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
	"github.com/visid/visid/store/schema"
)

// Store is the in-memory backend. Its zero value is not usable; call New. Data lives as long
// as the Store.
type Store struct {
	mu           sync.RWMutex // guards tenants, tenantIDs and the API keys
	tenants      map[string]*tenantData
	tenantIDs    orderedSet // the keys of tenants, in order
	keys         apiKeys
	codes        codeTable        // behind its own lock
	interactions interactionTable // behind its own lock
	pushed       pushedTable      // behind its own lock
	accessTokens accessTokenTable // behind its own lock
	signingKeys  signingKeyTable  // behind its own lock
	due          dueIndex         // behind its own lock, taken after a tenant's
	fields       *rowFields       // read-only after New
	pack         *packTable       // read-only after New
}

// tenantData holds one tenant's users, groups and clients behind its own lock, so tenants do
// not contend.
type tenantData struct {
	mu      sync.RWMutex
	info    store.Tenant
	deleted bool // set when the tenant is deleted; operations that raced with it see ErrNotFound

	// The maps below are nil until their first write (reads of a nil map find nothing).
	users        seq[*userRec]
	userByID     map[string]*userRec
	userByName   map[string]*userRec  // schema.Fold(userName)
	userByExtID  multiIndex[*userRec] // externalId (caseExact)
	userByEmail  multiIndex[*userRec] // schema.Fold(emails.value), each user once per key
	groups       seq[*groupRec]
	groupByID    map[string]*groupRec
	groupByName  multiIndex[*groupRec] // schema.Fold(displayName)
	groupByExtID multiIndex[*groupRec]
	unique       map[uniqueKey]any // the holder (*userRec or *groupRec) of each store.UniqueValue
	clients      seq[*clientRec]
	clientByID   map[string]*clientRec
	log          eventLog
	pack         *packTable    // the Store's, read-only
	due          *dueIndex     // the Store's
	webhooks     []*webhookRec // in creation order
	passkeys     *passkeyIndex // nil until the tenant's first passkey
}

// New returns an empty store.
func New() *Store {
	return &Store{
		tenants:      make(map[string]*tenantData),
		fields:       newRowFields(),
		pack:         newPackTable(),
		keys:         apiKeys{byID: map[string]*store.APIKey{}, byHash: map[[32]byte]*store.APIKey{}},
		codes:        codeTable{byHash: map[[32]byte]*codeRec{}},
		interactions: interactionTable{byID: map[string]*store.Interaction{}},
		pushed:       pushedTable{byHash: map[[32]byte]*store.PushedRequest{}},
		accessTokens: accessTokenTable{byHash: map[[32]byte]*store.AccessToken{}},
		signingKeys:  signingKeyTable{byID: map[string]*store.SigningKey{}, byTenant: map[string][]*store.SigningKey{}},
	}
}

// Backend returns the store's implementation of every store contract.
func (s *Store) Backend() store.Backend {
	return store.Backend{
		Tenants:      s.Tenants(),
		Users:        s.Users(),
		Groups:       s.Groups(),
		APIKeys:      s.APIKeys(),
		Clients:      s.Clients(),
		Codes:        s.Codes(),
		Interactions: s.Interactions(),
		Pushed:       s.PushedRequests(),
		AccessTokens: s.AccessTokens(),
		Pictures:     s.Pictures(),
		Passkeys:     s.Passkeys(),
		SigningKeys:  s.SigningKeys(),
		Events:       s.Events(),
		Webhooks:     s.Webhooks(),
	}
}

// Webhooks returns the store's store.Webhooks.
func (s *Store) Webhooks() *Webhooks { return &Webhooks{s} }

// Events returns the store's store.Events.
func (s *Store) Events() *Events { return &Events{s} }

// Tenants returns the store's store.Tenants.
func (s *Store) Tenants() *Tenants { return &Tenants{s} }

// Users returns the store's store.Users.
func (s *Store) Users() *Users { return &Users{s} }

// Groups returns the store's store.Groups.
func (s *Store) Groups() *Groups { return &Groups{s} }

// APIKeys returns the store's store.APIKeys.
func (s *Store) APIKeys() *APIKeys { return &APIKeys{s} }

// Clients returns the store's store.Clients.
func (s *Store) Clients() *Clients { return &Clients{s} }

// Codes returns the store's store.Codes.
func (s *Store) Codes() *Codes { return &Codes{s} }

// Interactions returns the store's store.Interactions.
func (s *Store) Interactions() *Interactions { return &Interactions{s} }

// PushedRequests returns the store's store.PushedRequests.
func (s *Store) PushedRequests() *PushedRequests { return &PushedRequests{s} }

// AccessTokens returns the store's store.AccessTokens.
func (s *Store) AccessTokens() *AccessTokens { return &AccessTokens{s} }

// SigningKeys returns the store's store.SigningKeys.
func (s *Store) SigningKeys() *SigningKeys { return &SigningKeys{s} }

func (s *Store) signingKeyTable() *signingKeyTable { return &s.signingKeys }

// Pictures returns the store's store.PictureCredentials.
func (s *Store) Pictures() *Pictures { return &Pictures{s} }

// Passkeys returns the store's store.Passkeys.
func (s *Store) Passkeys() *Passkeys { return &Passkeys{s} }

// Tenants implements store.Tenants.
type Tenants struct{ s *Store }

var _ store.Tenants = (*Tenants)(nil)

// Create implements store.Tenants.
func (ts *Tenants) Create(ctx context.Context, t store.Tenant) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !store.ValidTenantID(t.ID) {
		return fmt.Errorf("tenant id %q: %w", t.ID, store.ErrInvalid)
	}
	t.Logo = slices.Clone(t.Logo)
	if err := store.CheckTenant(&t); err != nil {
		return fmt.Errorf("tenant %q: %w", t.ID, err)
	}
	s := ts.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tenants[t.ID]; ok {
		return fmt.Errorf("tenant %q: %w", t.ID, store.ErrConflict)
	}
	// The tenant's indexes are made by their first write: an idle tenant holds no empty maps.
	s.tenants[t.ID] = &tenantData{pack: s.pack, due: &s.due, info: t}
	s.tenantIDs.add(t.ID)
	return nil
}

// Get implements store.Tenants.
func (ts *Tenants) Get(ctx context.Context, id string) (*store.Tenant, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := ts.s
	s.mu.RLock() // t.info changes under s.mu
	defer s.mu.RUnlock()
	t, ok := s.tenants[id]
	if !ok {
		return nil, fmt.Errorf("tenant %q: %w", id, store.ErrNotFound)
	}
	info := t.info
	info.Logo = slices.Clone(info.Logo)
	return &info, nil
}

// Update implements store.Tenants. It holds the store's lock, then the tenant's (for its event
// log), the order every writer takes them in.
func (ts *Tenants) Update(ctx context.Context, id string, fn func(*store.Tenant) error) (*store.Tenant, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := ts.s
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tenants[id]
	if !ok {
		return nil, fmt.Errorf("tenant %q: %w", id, store.ErrNotFound)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	before := t.info
	work := before
	work.Logo = slices.Clone(before.Logo)
	if err := fn(&work); err != nil {
		return nil, err
	}
	if work.ID != id {
		return nil, fmt.Errorf("tenant %q: the id cannot change: %w", id, store.ErrInvalid)
	}
	work.Logo = slices.Clone(work.Logo) // the caller's fn may keep the slice it set
	if err := store.CheckTenant(&work); err != nil {
		return nil, fmt.Errorf("tenant %q: %w", id, err)
	}
	if p := changes.New(ctx, id); p != nil {
		changes.Tenant(p, &before, &work)
		commit(p, t)
	}
	t.info = work
	out := work
	out.Logo = slices.Clone(work.Logo)
	return &out, nil
}

// List implements store.Tenants. It reads the page from the store's ordered index of ids.
func (ts *Tenants) List(ctx context.Context, after string, limit int) ([]store.Tenant, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit < 1 || limit > store.MaxTenantPage {
		return nil, fmt.Errorf("tenant page of %d: want 1 to %d: %w", limit, store.MaxTenantPage, store.ErrInvalid)
	}
	s := ts.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]store.Tenant, 0, min(limit, len(s.tenants)))
	s.tenantIDs.each(after, limit, func(id string) {
		info := s.tenants[id].info
		info.Logo = nil // List leaves the logos out
		out = append(out, info)
	})
	return out, nil
}

// Count implements store.Tenants.
func (ts *Tenants) Count(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s := ts.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.tenants), nil
}

// Delete implements store.Tenants.
func (ts *Tenants) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := ts.s
	s.mu.Lock()
	t, ok := s.tenants[id]
	delete(s.tenants, id)
	if ok {
		s.tenantIDs.remove(id)
		s.pushed.deleteTenant(id) // under s.mu, so no Create for the tenant comes between
		s.accessTokens.deleteTenant(id)
		s.signingKeys.deleteTenant(id)
	}
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("tenant %q: %w", id, store.ErrNotFound)
	}
	t.mu.Lock()
	t.deleted = true
	s.due.drop(t.webhooks...)
	t.mu.Unlock()
	return nil
}

// tenant returns the tenant, or ErrNotFound.
func (s *Store) tenant(ctx context.Context, id string) (*tenantData, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	t, ok := s.tenants[id]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("tenant %q: %w", id, store.ErrNotFound)
	}
	return t, nil
}

// read runs fn under the tenant's read lock.
func (s *Store) read(ctx context.Context, id string, fn func(*tenantData) error) error {
	t, err := s.tenant(ctx, id)
	if err != nil {
		return err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return fmt.Errorf("tenant %q: %w", id, store.ErrNotFound)
	}
	return fn(t)
}

// write runs fn under the tenant's write lock.
func (s *Store) write(ctx context.Context, id string, fn func(*tenantData) error) error {
	t, err := s.tenant(ctx, id)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deleted {
		return fmt.Errorf("tenant %q: %w", id, store.ErrNotFound)
	}
	return fn(t)
}

// get copies one record out under the tenant's read lock.
func get[R, T any](s *Store, ctx context.Context, tenant, id string, find func(*tenantData, string) (R, error), fill func(R, *T)) (*T, error) {
	var out *T
	err := s.read(ctx, tenant, func(t *tenantData) error {
		rec, err := find(t, id)
		if err == nil {
			out = new(T)
			fill(rec, out)
		}
		return err
	})
	return out, err
}

// update is the read-modify-write of Users.Update, Groups.Update and Clients.Update, under the tenant's write
// lock: fn gets a copy of the record, apply checks what fn left and stores it, and nothing
// changes unless both succeed. It returns the record as stored. apply gets the record as it is
// stored when update has it at hand (prior; nil: apply reads it itself).
//
// events collects the events of the change from the resource before and after it (nil: the
// resource has no events); when it fails, the change is undone (apply of the resource as it
// was) and nothing is stored.
func update[R, T any](s *Store, ctx context.Context, tenant, id string, find func(*tenantData, string) (R, error), fill func(R, *T), fn func(*T) error, apply func(t *tenantData, rec R, work, prior *T) error, events func(p *changes.Pending, before, after *T) error) (*T, error) {
	var out *T
	var p *changes.Pending
	if events != nil {
		p = changes.New(ctx, tenant)
	}
	err := s.write(ctx, tenant, func(t *tenantData) error {
		rec, err := find(t, id)
		if err != nil {
			return err
		}
		work := new(T)
		fill(rec, work)
		if err := fn(work); err != nil {
			return err
		}
		var before *T
		if p != nil {
			before = new(T)
			fill(rec, before)
		}
		if err := apply(t, rec, work, before); err != nil {
			return err
		}
		out = work // what the function left is no longer needed: it becomes what was stored
		fill(rec, out)
		if p != nil {
			if err := events(p, before, out); err != nil {
				// The state apply restores was stored a moment ago, so it passes apply's checks.
				if undo := apply(t, rec, before, out); undo != nil {
					return fmt.Errorf("%w; undoing the change: %w", err, undo)
				}
				return err
			}
			commit(p, t)
		}
		return nil
	})
	return out, err
}

// multiIndex maps a key to the records that hold it, in the order they were added. Most keys
// name one record, kept in one without a slice of its own; the keys that several records share
// are in more.
type multiIndex[T comparable] struct {
	one  map[string]T
	more map[string][]T
}

// add records that x holds key; the empty key is not indexed. The maps are made on the first
// add, so an index of a tenant that has nothing to index costs nothing but its two words.
func (m *multiIndex[T]) add(key string, x T) {
	if key == "" {
		return
	}
	if m.one == nil {
		m.one, m.more = map[string]T{}, map[string][]T{}
	}
	if list, ok := m.more[key]; ok {
		m.more[key] = append(list, x)
	} else if y, ok := m.one[key]; ok {
		delete(m.one, key)
		m.more[key] = []T{y, x}
	} else {
		m.one[key] = x
	}
}

// remove records that x no longer holds key.
func (m *multiIndex[T]) remove(key string, x T) {
	if y, ok := m.one[key]; ok {
		if y == x {
			delete(m.one, key)
		}
		return
	}
	list := m.more[key]
	if i := slices.Index(list, x); i >= 0 {
		list = slices.Delete(list, i, i+1)
		if len(list) == 1 {
			delete(m.more, key)
			m.one[key] = list[0]
		} else {
			m.more[key] = list
		}
	}
}

// get returns the records that hold key.
func (m multiIndex[T]) get(key string) []T {
	if x, ok := m.one[key]; ok {
		return []T{x}
	}
	return m.more[key]
}

// userNameKey is the index key of a userName.
func userNameKey(name string) string { return schema.Fold(name) }
