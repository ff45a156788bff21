package memstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// Passkeys implements store.Passkeys. A tenant's passkeys live in its passkeyIndex, under the
// tenant's lock, made by the tenant's first passkey: an idle tenant, and a user without
// passkeys, pay nothing for them. Users.Delete removes the user's; a deleted tenant takes its
// index with it.
type Passkeys struct{ s *Store }

var _ store.Passkeys = (*Passkeys)(nil)

// passkeyIndex holds one tenant's passkeys: by credential ID (the tenant's uniqueness) and by
// user, each user's in creation order. Both hold the same records.
type passkeyIndex struct {
	byID   map[string]*store.Passkey // string(ID)
	byUser map[string][]*store.Passkey
}

// maxPasskeyID is the longest credential ID the store takes, in bytes.
const maxPasskeyID = 1023

// Create implements store.Passkeys.
func (ps *Passkeys) Create(ctx context.Context, p store.Passkey) error {
	switch {
	case p.UserID == "":
		return fmt.Errorf("passkey without user: %w", store.ErrInvalid)
	case len(p.ID) == 0 || len(p.ID) > maxPasskeyID:
		return fmt.Errorf("passkey id of %d bytes: want 1 to %d: %w", len(p.ID), maxPasskeyID, store.ErrInvalid)
	case len(p.PublicKey) == 0:
		return fmt.Errorf("passkey without public key: %w", store.ErrInvalid)
	}
	return ps.s.write(ctx, p.Tenant, func(t *tenantData) error {
		if _, err := t.user(p.UserID); err != nil {
			return err
		}
		if t.passkeys == nil {
			t.passkeys = &passkeyIndex{byID: map[string]*store.Passkey{}, byUser: map[string][]*store.Passkey{}}
		}
		ix := t.passkeys
		if _, ok := ix.byID[string(p.ID)]; ok {
			return fmt.Errorf("passkey id taken in tenant %q: %w", p.Tenant, store.ErrConflict)
		}
		if len(ix.byUser[p.UserID]) >= store.MaxPasskeysPerUser {
			return fmt.Errorf("user %q holds %d passkeys: %w", p.UserID, store.MaxPasskeysPerUser, store.ErrConflict)
		}
		rec := copyPasskey(&p)
		ix.byID[string(rec.ID)] = rec
		ix.byUser[p.UserID] = append(ix.byUser[p.UserID], rec)
		return nil
	})
}

// Get implements store.Passkeys.
func (ps *Passkeys) Get(ctx context.Context, tenant string, id []byte) (*store.Passkey, error) {
	var out *store.Passkey
	err := ps.s.read(ctx, tenant, func(t *tenantData) error {
		var p *store.Passkey
		if t.passkeys != nil {
			p = t.passkeys.byID[string(id)]
		}
		if p == nil {
			return fmt.Errorf("passkey of tenant %q: %w", tenant, store.ErrNotFound)
		}
		out = copyPasskey(p)
		return nil
	})
	return out, err
}

// List implements store.Passkeys.
func (ps *Passkeys) List(ctx context.Context, tenant, userID string) ([]store.Passkey, error) {
	var out []store.Passkey
	err := ps.s.read(ctx, tenant, func(t *tenantData) error {
		if _, err := t.user(userID); err != nil {
			return err
		}
		var held []*store.Passkey
		if t.passkeys != nil {
			held = t.passkeys.byUser[userID]
		}
		out = make([]store.Passkey, len(held))
		for i, p := range held {
			out[i] = *copyPasskey(p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Use implements store.Passkeys.
func (ps *Passkeys) Use(ctx context.Context, tenant, userID string, id []byte, u store.PasskeyUse) error {
	return ps.s.write(ctx, tenant, func(t *tenantData) error {
		p, err := t.passkey(userID, id)
		if err != nil {
			return err
		}
		if p.SignCount != u.OldSignCount {
			return fmt.Errorf("passkey of user %q is at sign count %d, not %d: %w", userID, p.SignCount, u.OldSignCount, store.ErrConflict)
		}
		p.SignCount, p.BackupState, p.LastUsed = u.SignCount, u.BackupState, u.At
		return nil
	})
}

// Delete implements store.Passkeys.
func (ps *Passkeys) Delete(ctx context.Context, tenant, userID string, id []byte) error {
	ev := changes.New(ctx, tenant)
	return ps.s.write(ctx, tenant, func(t *tenantData) error {
		p, err := t.passkey(userID, id)
		if err != nil {
			return err
		}
		changes.PasskeyRemoved(ev, p)
		ix := t.passkeys
		delete(ix.byID, string(id))
		held := slices.DeleteFunc(ix.byUser[userID], func(q *store.Passkey) bool { return q == p })
		if len(held) == 0 {
			delete(ix.byUser, userID)
		} else {
			ix.byUser[userID] = held
		}
		commit(ev, t)
		return nil
	})
}

// passkey returns the stored passkey id of user userID, for the caller to read or change under
// the tenant's lock.
func (t *tenantData) passkey(userID string, id []byte) (*store.Passkey, error) {
	if t.passkeys != nil {
		if p := t.passkeys.byID[string(id)]; p != nil && p.UserID == userID {
			return p, nil
		}
	}
	return nil, fmt.Errorf("passkey of user %q: %w", userID, store.ErrNotFound)
}

// dropPasskeys removes the passkeys of user userID, which is being deleted.
func (t *tenantData) dropPasskeys(userID string) {
	if t.passkeys == nil {
		return
	}
	for _, p := range t.passkeys.byUser[userID] {
		delete(t.passkeys.byID, string(p.ID))
	}
	delete(t.passkeys.byUser, userID)
}

func copyPasskey(p *store.Passkey) *store.Passkey {
	out := *p
	out.ID = bytes.Clone(p.ID)
	out.PublicKey = bytes.Clone(p.PublicKey)
	out.AAGUID = bytes.Clone(p.AAGUID)
	out.Transports = slices.Clone(p.Transports)
	return &out
}
