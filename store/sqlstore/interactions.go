package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/visid/visid/store"
)

// Interactions implements store.Interactions. Its errors never carry an interaction's id: it
// names the interaction in URLs, and errors may be logged.
type Interactions struct{ s *Store }

var _ store.Interactions = (*Interactions)(nil)

const interactionColumns = `id, purpose, tenant, client_id, redirect_uri, state, nonce, challenge, login_hint, subject,
	created, expires, auth_state, replace_factor`

func interactionArgs(i *store.Interaction) []any {
	return []any{i.ID, i.Purpose, i.Tenant, i.ClientID, i.RedirectURI, i.State, i.Nonce, i.Challenge, i.LoginHint,
		i.Subject, nanos(i.Created), i.Expires.UnixNano(), i.AuthState, i.ReplaceFactor}
}

// Create implements store.Interactions.
func (is *Interactions) Create(ctx context.Context, i store.Interaction) error {
	switch {
	case i.ID == "":
		return fmt.Errorf("interaction without id: %w", store.ErrInvalid)
	case i.Expires.IsZero():
		return fmt.Errorf("interaction without expiry: %w", store.ErrInvalid)
	}
	return is.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `INSERT INTO interactions (`+interactionColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, interactionArgs(&i)...)
		if err == nil && n == 0 {
			err = fmt.Errorf("interaction: id taken: %w", store.ErrConflict)
		}
		return err
	})
}

// Get implements store.Interactions.
func (is *Interactions) Get(ctx context.Context, id string) (*store.Interaction, error) {
	var out *store.Interaction
	err := is.s.read(ctx, func(tx *txn) error {
		var err error
		out, err = interactionOrNotFound(scanInteraction(tx.queryRow(ctx, `SELECT `+interactionColumns+` FROM interactions WHERE id = ?`, id)))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Update implements store.Interactions.
func (is *Interactions) Update(ctx context.Context, id string, fn func(*store.Interaction) error) (*store.Interaction, error) {
	if !storableText(id) {
		return nil, fmt.Errorf("interaction: %w", store.ErrNotFound) // no stored id holds it
	}
	var out *store.Interaction
	err := is.s.write(ctx, func(tx *txn) error {
		work, err := interactionOrNotFound(scanInteraction(tx.queryRow(ctx,
			`SELECT `+interactionColumns+` FROM interactions WHERE id = ?`+tx.d.forUpdate(), id)))
		if err != nil {
			return err
		}
		if err := fn(work); err != nil {
			return err
		}
		if work.ID != id {
			return fmt.Errorf("interaction: the id cannot change: %w", store.ErrInvalid)
		}
		args := interactionArgs(work)
		if _, err := tx.exec(ctx, `UPDATE interactions SET purpose = ?, tenant = ?, client_id = ?, redirect_uri = ?,
			state = ?, nonce = ?, challenge = ?, login_hint = ?, subject = ?, created = ?, expires = ?, auth_state = ?,
			replace_factor = ? WHERE id = ?`, append(args[1:], id)...); err != nil {
			return err
		}
		out, err = scanInteraction(tx.queryRow(ctx, `SELECT `+interactionColumns+` FROM interactions WHERE id = ?`, id))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Take implements store.Interactions: one DELETE … RETURNING, so of concurrent Takes exactly one
// gets the row.
func (is *Interactions) Take(ctx context.Context, id string) (*store.Interaction, error) {
	if !storableText(id) {
		return nil, fmt.Errorf("interaction: %w", store.ErrNotFound) // no stored id holds it
	}
	var out *store.Interaction
	err := is.s.write(ctx, func(tx *txn) error {
		var err error
		out, err = interactionOrNotFound(scanInteraction(tx.queryRow(ctx,
			`DELETE FROM interactions WHERE id = ? RETURNING `+interactionColumns, id)))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteExpired implements store.Interactions.
func (is *Interactions) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := is.s.write(ctx, func(tx *txn) error {
		var err error
		n, err = tx.affected(ctx, `DELETE FROM interactions WHERE expires < ?`, now.UnixNano())
		return err
	})
	return int(n), err
}

func interactionOrNotFound(i *store.Interaction, err error) (*store.Interaction, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("interaction: %w", store.ErrNotFound)
	}
	return i, err
}

func scanInteraction(row scanner) (*store.Interaction, error) {
	var i store.Interaction
	var created sql.NullInt64
	var expires int64
	if err := row.Scan(&i.ID, &i.Purpose, &i.Tenant, &i.ClientID, &i.RedirectURI, &i.State, &i.Nonce, &i.Challenge,
		&i.LoginHint, &i.Subject, &created, &expires, &i.AuthState, &i.ReplaceFactor); err != nil {
		return nil, err
	}
	i.Created = fromNanos(created)
	i.Expires = time.Unix(0, expires).UTC()
	return &i, nil
}
