package memstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// Pictures implements store.PictureCredentials. A credential lives on its user's record, so it
// goes when the user or the tenant goes.
type Pictures struct{ s *Store }

var _ store.PictureCredentials = (*Pictures)(nil)

// Get implements store.PictureCredentials.
func (ps *Pictures) Get(ctx context.Context, tenant, userID string) (*store.PictureCredential, error) {
	var out *store.PictureCredential
	err := ps.s.read(ctx, tenant, func(t *tenantData) error {
		c, err := t.picture(userID)
		if err == nil {
			out = copyPicture(c)
		}
		return err
	})
	return out, err
}

// Put implements store.PictureCredentials.
func (ps *Pictures) Put(ctx context.Context, c store.PictureCredential) error {
	return ps.put(ctx, c, true)
}

// Create implements store.PictureCredentials.
func (ps *Pictures) Create(ctx context.Context, c store.PictureCredential) error {
	return ps.put(ctx, c, false)
}

// put stores c, replacing the user's credential when replace is set and failing with
// ErrConflict when it is not and the user has one.
func (ps *Pictures) put(ctx context.Context, c store.PictureCredential, replace bool) error {
	switch {
	case c.UserID == "":
		return fmt.Errorf("picture credential without user: %w", store.ErrInvalid)
	case len(c.Hash) == 0 || len(c.Salt) == 0:
		return fmt.Errorf("picture credential without hash or salt: %w", store.ErrInvalid)
	}
	return ps.s.write(ctx, c.Tenant, func(t *tenantData) error {
		rec, err := t.user(c.UserID)
		if err != nil {
			return err
		}
		if rec.picture != nil && !replace {
			return fmt.Errorf("picture credential of user %q: %w", c.UserID, store.ErrConflict)
		}
		rec.picture = copyPicture(&c)
		rec.picture.Failures, rec.picture.Networks, rec.picture.LastFailure = 0, 0, time.Time{}
		rec.nets, rec.familiar = nil, nil
		return nil
	})
}

// Rehash implements store.PictureCredentials.
func (ps *Pictures) Rehash(ctx context.Context, c store.PictureCredential, oldHash []byte) error {
	return ps.s.write(ctx, c.Tenant, func(t *tenantData) error {
		p, err := t.picture(c.UserID)
		if err != nil {
			return err
		}
		if !bytes.Equal(p.Hash, oldHash) {
			return fmt.Errorf("picture credential of user %q changed: %w", c.UserID, store.ErrConflict)
		}
		p.Scheme, p.PepperID, p.Updated = c.Scheme, c.PepperID, c.Updated
		p.Salt, p.Hash = slices.Clone(c.Salt), slices.Clone(c.Hash)
		p.ArgonTime, p.ArgonMemory, p.ArgonThreads = c.ArgonTime, c.ArgonMemory, c.ArgonThreads
		return nil
	})
}

// Delete implements store.PictureCredentials.
func (ps *Pictures) Delete(ctx context.Context, tenant, userID string) error {
	return ps.s.write(ctx, tenant, func(t *tenantData) error {
		if _, err := t.picture(userID); err != nil {
			return err
		}
		rec := t.userByID[userID]
		rec.picture, rec.nets, rec.familiar = nil, nil, nil
		return nil
	})
}

// netFailures is the failure count of one user from one network.
type netFailures struct {
	failures int
	last     time.Time
	epoch    int // the user's epoch at the latest failure
}

// AddFailure implements store.PictureCredentials.
func (ps *Pictures) AddFailure(ctx context.Context, tenant, userID, network string, at time.Time) (store.FailureCounts, error) {
	var n store.FailureCounts
	err := ps.s.write(ctx, tenant, func(t *tenantData) error {
		p, err := t.picture(userID)
		if err != nil {
			return err
		}
		if network == "" {
			return fmt.Errorf("picture failure without network: %w", store.ErrInvalid)
		}
		rec := t.userByID[userID]
		f := rec.nets[network]
		if f == nil {
			f = &netFailures{epoch: rec.epoch - 1}
			if rec.nets == nil {
				rec.nets = map[string]*netFailures{}
			}
			rec.nets[network] = f
		}
		if f.epoch != rec.epoch {
			p.Networks++
		}
		f.failures++
		f.last, f.epoch = at, rec.epoch
		p.Failures++
		p.LastFailure = at
		n = store.FailureCounts{Network: f.failures, User: p.Failures, Networks: p.Networks}
		return nil
	})
	return n, err
}

// NetworkFailures implements store.PictureCredentials.
func (ps *Pictures) NetworkFailures(ctx context.Context, tenant, userID, network string) (store.NetworkFailures, error) {
	out := store.NetworkFailures{Network: network}
	err := ps.s.read(ctx, tenant, func(t *tenantData) error {
		if _, err := t.picture(userID); err != nil {
			return err
		}
		if f := t.userByID[userID].nets[network]; f != nil {
			out.Failures, out.LastFailure = f.failures, f.last
		}
		return nil
	})
	return out, err
}

// ListNetworkFailures implements store.PictureCredentials.
func (ps *Pictures) ListNetworkFailures(ctx context.Context, tenant, userID string) ([]store.NetworkFailures, error) {
	var out []store.NetworkFailures
	err := ps.s.read(ctx, tenant, func(t *tenantData) error {
		if _, err := t.picture(userID); err != nil {
			return err
		}
		for network, f := range t.userByID[userID].nets {
			if f.failures == 0 {
				continue
			}
			out = append(out, store.NetworkFailures{Network: network, Failures: f.failures, LastFailure: f.last})
		}
		return nil
	})
	slices.SortFunc(out, func(a, b store.NetworkFailures) int { return strings.Compare(a.Network, b.Network) })
	return out, err
}

// Succeeded implements store.PictureCredentials.
func (ps *Pictures) Succeeded(ctx context.Context, tenant, userID string, s store.PictureSuccess) error {
	if s.Network == "" {
		return fmt.Errorf("picture success without network: %w", store.ErrInvalid)
	}
	return ps.s.write(ctx, tenant, func(t *tenantData) error {
		p, err := t.picture(userID)
		if err != nil {
			return err
		}
		rec := t.userByID[userID]
		if f := rec.nets[s.Network]; f != nil && s.KeepUserCount {
			f.failures, f.last = 0, time.Time{} // its epoch stays: it has been counted
		} else {
			delete(rec.nets, s.Network)
		}
		if !s.KeepUserCount {
			rec.epoch++
			p.Failures, p.Networks, p.LastFailure = 0, 0, time.Time{}
		}
		fam := slices.DeleteFunc(rec.familiar, func(f store.FamiliarNetwork) bool { return f.Network == s.Network })
		fam = append(fam, store.FamiliarNetwork{Network: s.Network, Passed: s.At})
		slices.SortStableFunc(fam, compareFamiliar)
		rec.familiar = fam[:min(len(fam), max(s.KeepFamiliar, 1))]
		return nil
	})
}

// compareFamiliar orders familiar networks the most recently passed first, then by network.
func compareFamiliar(a, b store.FamiliarNetwork) int {
	if c := b.Passed.Compare(a.Passed); c != 0 {
		return c
	}
	return strings.Compare(a.Network, b.Network)
}

// FamiliarNetworks implements store.PictureCredentials.
func (ps *Pictures) FamiliarNetworks(ctx context.Context, tenant, userID string) ([]store.FamiliarNetwork, error) {
	var out []store.FamiliarNetwork
	err := ps.s.read(ctx, tenant, func(t *tenantData) error {
		if _, err := t.picture(userID); err != nil {
			return err
		}
		out = slices.Clone(t.userByID[userID].familiar)
		return nil
	})
	return out, err
}

// ResetFailures implements store.PictureCredentials.
func (ps *Pictures) ResetFailures(ctx context.Context, tenant, userID string) error {
	ev := changes.New(ctx, tenant)
	return ps.s.write(ctx, tenant, func(t *tenantData) error {
		p, err := t.picture(userID)
		if err == nil {
			rec := t.userByID[userID]
			sum := 0
			for _, f := range rec.nets {
				sum += f.failures
			}
			changes.Unlocked(ev, userID, max(p.Failures, sum))
			rec.nets = nil
			rec.epoch++
			p.Failures, p.Networks, p.LastFailure = 0, 0, time.Time{}
			commit(ev, t)
		}
		return err
	})
}

// picture returns the stored credential of user id, for the caller to read or change under the
// tenant's lock.
func (t *tenantData) picture(id string) (*store.PictureCredential, error) {
	rec, ok := t.userByID[id]
	if !ok || rec.picture == nil {
		return nil, fmt.Errorf("picture credential of user %q: %w", id, store.ErrNotFound)
	}
	return rec.picture, nil
}

func copyPicture(c *store.PictureCredential) *store.PictureCredential {
	out := *c
	out.ImageDigest = slices.Clone(c.ImageDigest)
	out.Offsets = slices.Clone(c.Offsets)
	out.Salt = slices.Clone(c.Salt)
	out.Hash = slices.Clone(c.Hash)
	return &out
}
