// The wrappers of every store interface, one method each: each call is timed and traced by its
// observer.

package otelstore

import (
	"context"
	"time"

	"github.com/visid/visid/store"
)

// tenants is a store.Tenants whose calls are timed and traced.
type tenants struct {
	next store.Tenants
	o    *observer
}

func (s tenants) Create(ctx context.Context, t store.Tenant) error {
	ctx, call := s.o.start(ctx, "tenants.create")
	err := s.next.Create(ctx, t)
	call.end(err)
	return err
}

func (s tenants) Get(ctx context.Context, id string) (*store.Tenant, error) {
	ctx, call := s.o.start(ctx, "tenants.get")
	v, err := s.next.Get(ctx, id)
	call.end(err)
	return v, err
}

func (s tenants) List(ctx context.Context, after string, limit int) ([]store.Tenant, error) {
	ctx, call := s.o.start(ctx, "tenants.list")
	v, err := s.next.List(ctx, after, limit)
	call.end(err)
	return v, err
}

func (s tenants) Count(ctx context.Context) (int, error) {
	ctx, call := s.o.start(ctx, "tenants.count")
	v, err := s.next.Count(ctx)
	call.end(err)
	return v, err
}

func (s tenants) Update(ctx context.Context, id string, fn func(*store.Tenant) error) (*store.Tenant, error) {
	ctx, call := s.o.start(ctx, "tenants.update")
	v, err := s.next.Update(ctx, id, fn)
	call.end(err)
	return v, err
}

func (s tenants) Delete(ctx context.Context, id string) error {
	ctx, call := s.o.start(ctx, "tenants.delete")
	err := s.next.Delete(ctx, id)
	call.end(err)
	return err
}

// users is a store.Users whose calls are timed and traced.
type users struct {
	next store.Users
	o    *observer
}

func (s users) Create(ctx context.Context, tenant string, u store.User) (*store.User, error) {
	ctx, call := s.o.start(ctx, "users.create")
	v, err := s.next.Create(ctx, tenant, u)
	call.end(err)
	return v, err
}

func (s users) Get(ctx context.Context, tenant string, id string) (*store.User, error) {
	ctx, call := s.o.start(ctx, "users.get")
	v, err := s.next.Get(ctx, tenant, id)
	call.end(err)
	return v, err
}

func (s users) Update(ctx context.Context, tenant string, id string, fn func(*store.User) error) (*store.User, error) {
	ctx, call := s.o.start(ctx, "users.update")
	v, err := s.next.Update(ctx, tenant, id, fn)
	call.end(err)
	return v, err
}

func (s users) Delete(ctx context.Context, tenant string, id string) error {
	ctx, call := s.o.start(ctx, "users.delete")
	err := s.next.Delete(ctx, tenant, id)
	call.end(err)
	return err
}

func (s users) DeleteIfVersion(ctx context.Context, tenant string, id string, version int64) error {
	ctx, call := s.o.start(ctx, "users.delete_if_version")
	err := s.next.DeleteIfVersion(ctx, tenant, id, version)
	call.end(err)
	return err
}

func (s users) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.User], error) {
	ctx, call := s.o.start(ctx, "users.list")
	v, err := s.next.List(ctx, tenant, q)
	call.end(err)
	return v, err
}

// groups is a store.Groups whose calls are timed and traced.
type groups struct {
	next store.Groups
	o    *observer
}

func (s groups) Create(ctx context.Context, tenant string, g store.Group) (*store.Group, error) {
	ctx, call := s.o.start(ctx, "groups.create")
	v, err := s.next.Create(ctx, tenant, g)
	call.end(err)
	return v, err
}

func (s groups) Get(ctx context.Context, tenant string, id string) (*store.Group, error) {
	ctx, call := s.o.start(ctx, "groups.get")
	v, err := s.next.Get(ctx, tenant, id)
	call.end(err)
	return v, err
}

func (s groups) GetWithoutMembers(ctx context.Context, tenant string, id string) (*store.Group, error) {
	ctx, call := s.o.start(ctx, "groups.get_without_members")
	v, err := s.next.GetWithoutMembers(ctx, tenant, id)
	call.end(err)
	return v, err
}

func (s groups) Patch(ctx context.Context, tenant string, id string, p store.GroupPatch) (*store.Group, error) {
	ctx, call := s.o.start(ctx, "groups.patch")
	v, err := s.next.Patch(ctx, tenant, id, p)
	call.end(err)
	return v, err
}

func (s groups) Update(ctx context.Context, tenant string, id string, fn func(*store.Group) error) (*store.Group, error) {
	ctx, call := s.o.start(ctx, "groups.update")
	v, err := s.next.Update(ctx, tenant, id, fn)
	call.end(err)
	return v, err
}

func (s groups) Delete(ctx context.Context, tenant string, id string) error {
	ctx, call := s.o.start(ctx, "groups.delete")
	err := s.next.Delete(ctx, tenant, id)
	call.end(err)
	return err
}

func (s groups) DeleteIfVersion(ctx context.Context, tenant string, id string, version int64) error {
	ctx, call := s.o.start(ctx, "groups.delete_if_version")
	err := s.next.DeleteIfVersion(ctx, tenant, id, version)
	call.end(err)
	return err
}

func (s groups) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.Group], error) {
	ctx, call := s.o.start(ctx, "groups.list")
	v, err := s.next.List(ctx, tenant, q)
	call.end(err)
	return v, err
}

// versionedAPIKeys is apiKeys over a store that implements store.APIKeyVersions, which it
// passes on (untimed: it reads a number).
type versionedAPIKeys struct {
	apiKeys
	v store.APIKeyVersions
}

func (s versionedAPIKeys) KeyVersion() uint64 { return s.v.KeyVersion() }

// apiKeys is a store.APIKeys whose calls are timed and traced.
type apiKeys struct {
	next store.APIKeys
	o    *observer
}

func (s apiKeys) Create(ctx context.Context, k store.APIKey) (*store.APIKey, error) {
	ctx, call := s.o.start(ctx, "api_keys.create")
	v, err := s.next.Create(ctx, k)
	call.end(err)
	return v, err
}

func (s apiKeys) ByHash(ctx context.Context, h [32]byte) (*store.APIKey, error) {
	ctx, call := s.o.start(ctx, "api_keys.by_hash")
	v, err := s.next.ByHash(ctx, h)
	call.end(err)
	return v, err
}

func (s apiKeys) Get(ctx context.Context, id string) (*store.APIKey, error) {
	ctx, call := s.o.start(ctx, "api_keys.get")
	v, err := s.next.Get(ctx, id)
	call.end(err)
	return v, err
}

func (s apiKeys) List(ctx context.Context) ([]store.APIKey, error) {
	ctx, call := s.o.start(ctx, "api_keys.list")
	v, err := s.next.List(ctx)
	call.end(err)
	return v, err
}

func (s apiKeys) Touch(ctx context.Context, id string, t time.Time) error {
	ctx, call := s.o.start(ctx, "api_keys.touch")
	err := s.next.Touch(ctx, id, t)
	call.end(err)
	return err
}

func (s apiKeys) Revoke(ctx context.Context, id string, t time.Time) error {
	ctx, call := s.o.start(ctx, "api_keys.revoke")
	err := s.next.Revoke(ctx, id, t)
	call.end(err)
	return err
}

// clients is a store.Clients whose calls are timed and traced.
type clients struct {
	next store.Clients
	o    *observer
}

func (s clients) Create(ctx context.Context, c store.Client) (*store.Client, error) {
	ctx, call := s.o.start(ctx, "clients.create")
	v, err := s.next.Create(ctx, c)
	call.end(err)
	return v, err
}

func (s clients) Get(ctx context.Context, tenant string, id string) (*store.Client, error) {
	ctx, call := s.o.start(ctx, "clients.get")
	v, err := s.next.Get(ctx, tenant, id)
	call.end(err)
	return v, err
}

func (s clients) List(ctx context.Context, tenant string) ([]store.Client, error) {
	ctx, call := s.o.start(ctx, "clients.list")
	v, err := s.next.List(ctx, tenant)
	call.end(err)
	return v, err
}

func (s clients) Update(ctx context.Context, tenant string, id string, fn func(*store.Client) error) (*store.Client, error) {
	ctx, call := s.o.start(ctx, "clients.update")
	v, err := s.next.Update(ctx, tenant, id, fn)
	call.end(err)
	return v, err
}

func (s clients) Delete(ctx context.Context, tenant string, id string) error {
	ctx, call := s.o.start(ctx, "clients.delete")
	err := s.next.Delete(ctx, tenant, id)
	call.end(err)
	return err
}

// codes is a store.Codes whose calls are timed and traced.
type codes struct {
	next store.Codes
	o    *observer
}

func (s codes) Create(ctx context.Context, c store.Code) error {
	ctx, call := s.o.start(ctx, "codes.create")
	err := s.next.Create(ctx, c)
	call.end(err)
	return err
}

func (s codes) Consume(ctx context.Context, h [32]byte) (*store.Code, error) {
	ctx, call := s.o.start(ctx, "codes.consume")
	v, err := s.next.Consume(ctx, h)
	call.end(err)
	return v, err
}

func (s codes) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	ctx, call := s.o.start(ctx, "codes.delete_expired")
	v, err := s.next.DeleteExpired(ctx, now)
	call.end(err)
	return v, err
}

// interactions is a store.Interactions whose calls are timed and traced.
type interactions struct {
	next store.Interactions
	o    *observer
}

func (s interactions) Create(ctx context.Context, i store.Interaction) error {
	ctx, call := s.o.start(ctx, "interactions.create")
	err := s.next.Create(ctx, i)
	call.end(err)
	return err
}

func (s interactions) Get(ctx context.Context, id string) (*store.Interaction, error) {
	ctx, call := s.o.start(ctx, "interactions.get")
	v, err := s.next.Get(ctx, id)
	call.end(err)
	return v, err
}

func (s interactions) Update(ctx context.Context, id string, fn func(*store.Interaction) error) (*store.Interaction, error) {
	ctx, call := s.o.start(ctx, "interactions.update")
	v, err := s.next.Update(ctx, id, fn)
	call.end(err)
	return v, err
}

func (s interactions) Take(ctx context.Context, id string) (*store.Interaction, error) {
	ctx, call := s.o.start(ctx, "interactions.take")
	v, err := s.next.Take(ctx, id)
	call.end(err)
	return v, err
}

func (s interactions) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	ctx, call := s.o.start(ctx, "interactions.delete_expired")
	v, err := s.next.DeleteExpired(ctx, now)
	call.end(err)
	return v, err
}

// pushedRequests is a store.PushedRequests whose calls are timed and traced.
type pushedRequests struct {
	next store.PushedRequests
	o    *observer
}

func (s pushedRequests) Create(ctx context.Context, r store.PushedRequest) error {
	ctx, call := s.o.start(ctx, "pushed_requests.create")
	err := s.next.Create(ctx, r)
	call.end(err)
	return err
}

func (s pushedRequests) Consume(ctx context.Context, tenant string, clientID string, h [32]byte, now time.Time) (*store.PushedRequest, error) {
	ctx, call := s.o.start(ctx, "pushed_requests.consume")
	v, err := s.next.Consume(ctx, tenant, clientID, h, now)
	call.end(err)
	return v, err
}

func (s pushedRequests) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	ctx, call := s.o.start(ctx, "pushed_requests.delete_expired")
	v, err := s.next.DeleteExpired(ctx, now)
	call.end(err)
	return v, err
}

// accessTokens is a store.AccessTokens whose calls are timed and traced.
type accessTokens struct {
	next store.AccessTokens
	o    *observer
}

func (s accessTokens) Create(ctx context.Context, t store.AccessToken) error {
	ctx, call := s.o.start(ctx, "access_tokens.create")
	err := s.next.Create(ctx, t)
	call.end(err)
	return err
}

func (s accessTokens) Get(ctx context.Context, h [32]byte) (*store.AccessToken, error) {
	ctx, call := s.o.start(ctx, "access_tokens.get")
	v, err := s.next.Get(ctx, h)
	call.end(err)
	return v, err
}

func (s accessTokens) RevokeCode(ctx context.Context, codeHash [32]byte) (int, error) {
	ctx, call := s.o.start(ctx, "access_tokens.revoke_code")
	v, err := s.next.RevokeCode(ctx, codeHash)
	call.end(err)
	return v, err
}

func (s accessTokens) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	ctx, call := s.o.start(ctx, "access_tokens.delete_expired")
	v, err := s.next.DeleteExpired(ctx, now)
	call.end(err)
	return v, err
}

// pictureCredentials is a store.PictureCredentials whose calls are timed and traced.
type pictureCredentials struct {
	next store.PictureCredentials
	o    *observer
}

func (s pictureCredentials) Get(ctx context.Context, tenant string, userID string) (*store.PictureCredential, error) {
	ctx, call := s.o.start(ctx, "pictures.get")
	v, err := s.next.Get(ctx, tenant, userID)
	call.end(err)
	return v, err
}

func (s pictureCredentials) Put(ctx context.Context, c store.PictureCredential) error {
	ctx, call := s.o.start(ctx, "pictures.put")
	err := s.next.Put(ctx, c)
	call.end(err)
	return err
}

func (s pictureCredentials) Create(ctx context.Context, c store.PictureCredential) error {
	ctx, call := s.o.start(ctx, "pictures.create")
	err := s.next.Create(ctx, c)
	call.end(err)
	return err
}

func (s pictureCredentials) Rehash(ctx context.Context, c store.PictureCredential, oldHash []byte) error {
	ctx, call := s.o.start(ctx, "pictures.rehash")
	err := s.next.Rehash(ctx, c, oldHash)
	call.end(err)
	return err
}

func (s pictureCredentials) Delete(ctx context.Context, tenant string, userID string) error {
	ctx, call := s.o.start(ctx, "pictures.delete")
	err := s.next.Delete(ctx, tenant, userID)
	call.end(err)
	return err
}

func (s pictureCredentials) AddFailure(ctx context.Context, tenant string, userID string, network string, at time.Time) (store.FailureCounts, error) {
	ctx, call := s.o.start(ctx, "pictures.add_failure")
	v, err := s.next.AddFailure(ctx, tenant, userID, network, at)
	call.end(err)
	return v, err
}

func (s pictureCredentials) NetworkFailures(ctx context.Context, tenant string, userID string, network string) (store.NetworkFailures, error) {
	ctx, call := s.o.start(ctx, "pictures.network_failures")
	v, err := s.next.NetworkFailures(ctx, tenant, userID, network)
	call.end(err)
	return v, err
}

func (s pictureCredentials) ListNetworkFailures(ctx context.Context, tenant string, userID string) ([]store.NetworkFailures, error) {
	ctx, call := s.o.start(ctx, "pictures.list_network_failures")
	v, err := s.next.ListNetworkFailures(ctx, tenant, userID)
	call.end(err)
	return v, err
}

func (s pictureCredentials) Succeeded(ctx context.Context, tenant string, userID string, ps store.PictureSuccess) error {
	ctx, call := s.o.start(ctx, "pictures.succeeded")
	err := s.next.Succeeded(ctx, tenant, userID, ps)
	call.end(err)
	return err
}

func (s pictureCredentials) FamiliarNetworks(ctx context.Context, tenant string, userID string) ([]store.FamiliarNetwork, error) {
	ctx, call := s.o.start(ctx, "pictures.familiar_networks")
	v, err := s.next.FamiliarNetworks(ctx, tenant, userID)
	call.end(err)
	return v, err
}

func (s pictureCredentials) ResetFailures(ctx context.Context, tenant string, userID string) error {
	ctx, call := s.o.start(ctx, "pictures.reset_failures")
	err := s.next.ResetFailures(ctx, tenant, userID)
	call.end(err)
	return err
}

// passkeys is a store.Passkeys whose calls are timed and traced.
type passkeys struct {
	next store.Passkeys
	o    *observer
}

func (s passkeys) Create(ctx context.Context, p store.Passkey) error {
	ctx, call := s.o.start(ctx, "passkeys.create")
	err := s.next.Create(ctx, p)
	call.end(err)
	return err
}

func (s passkeys) Get(ctx context.Context, tenant string, id []byte) (*store.Passkey, error) {
	ctx, call := s.o.start(ctx, "passkeys.get")
	v, err := s.next.Get(ctx, tenant, id)
	call.end(err)
	return v, err
}

func (s passkeys) List(ctx context.Context, tenant string, userID string) ([]store.Passkey, error) {
	ctx, call := s.o.start(ctx, "passkeys.list")
	v, err := s.next.List(ctx, tenant, userID)
	call.end(err)
	return v, err
}

func (s passkeys) Use(ctx context.Context, tenant string, userID string, id []byte, u store.PasskeyUse) error {
	ctx, call := s.o.start(ctx, "passkeys.use")
	err := s.next.Use(ctx, tenant, userID, id, u)
	call.end(err)
	return err
}

func (s passkeys) Delete(ctx context.Context, tenant string, userID string, id []byte) error {
	ctx, call := s.o.start(ctx, "passkeys.delete")
	err := s.next.Delete(ctx, tenant, userID, id)
	call.end(err)
	return err
}

// signingKeys is a store.SigningKeys whose calls are timed and traced.
type signingKeys struct {
	next store.SigningKeys
	o    *observer
}

func (s signingKeys) Add(ctx context.Context, k store.SigningKey) error {
	ctx, call := s.o.start(ctx, "signing_keys.add")
	err := s.next.Add(ctx, k)
	call.end(err)
	return err
}

func (s signingKeys) List(ctx context.Context, tenant string) ([]store.SigningKey, error) {
	ctx, call := s.o.start(ctx, "signing_keys.list")
	v, err := s.next.List(ctx, tenant)
	call.end(err)
	return v, err
}

func (s signingKeys) Tenants(ctx context.Context, after string, limit int) ([]string, error) {
	ctx, call := s.o.start(ctx, "signing_keys.tenants")
	v, err := s.next.Tenants(ctx, after, limit)
	call.end(err)
	return v, err
}

func (s signingKeys) Retire(ctx context.Context, id string, t time.Time) error {
	ctx, call := s.o.start(ctx, "signing_keys.retire")
	err := s.next.Retire(ctx, id, t)
	call.end(err)
	return err
}

func (s signingKeys) Delete(ctx context.Context, id string) error {
	ctx, call := s.o.start(ctx, "signing_keys.delete")
	err := s.next.Delete(ctx, id)
	call.end(err)
	return err
}

// events is a store.Events whose calls are timed and traced.
type events struct {
	next store.Events
	o    *observer
}

func (s events) List(ctx context.Context, tenant string, after string, limit int) ([]store.Event, error) {
	ctx, call := s.o.start(ctx, "events.list")
	v, err := s.next.List(ctx, tenant, after, limit)
	call.end(err)
	return v, err
}

func (s events) Append(ctx context.Context, tenant string, events ...store.Event) error {
	ctx, call := s.o.start(ctx, "events.append")
	err := s.next.Append(ctx, tenant, events...)
	call.end(err)
	return err
}

func (s events) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	ctx, call := s.o.start(ctx, "events.delete_expired")
	v, err := s.next.DeleteExpired(ctx, before)
	call.end(err)
	return v, err
}

// webhooks is a store.Webhooks whose calls are timed and traced.
type webhooks struct {
	next store.Webhooks
	o    *observer
}

func (s webhooks) Create(ctx context.Context, e store.WebhookEndpoint) (*store.WebhookEndpoint, error) {
	ctx, call := s.o.start(ctx, "webhooks.create")
	v, err := s.next.Create(ctx, e)
	call.end(err)
	return v, err
}

func (s webhooks) Get(ctx context.Context, tenant string, id string) (*store.WebhookEndpoint, error) {
	ctx, call := s.o.start(ctx, "webhooks.get")
	v, err := s.next.Get(ctx, tenant, id)
	call.end(err)
	return v, err
}

func (s webhooks) List(ctx context.Context, tenant string) ([]store.WebhookEndpoint, error) {
	ctx, call := s.o.start(ctx, "webhooks.list")
	v, err := s.next.List(ctx, tenant)
	call.end(err)
	return v, err
}

func (s webhooks) Delete(ctx context.Context, tenant string, id string) error {
	ctx, call := s.o.start(ctx, "webhooks.delete")
	err := s.next.Delete(ctx, tenant, id)
	call.end(err)
	return err
}

func (s webhooks) Lease(ctx context.Context, tenant string, id string, holder string, now time.Time, until time.Time) error {
	ctx, call := s.o.start(ctx, "webhooks.lease")
	err := s.next.Lease(ctx, tenant, id, holder, now, until)
	call.end(err)
	return err
}

func (s webhooks) SaveDelivery(ctx context.Context, tenant string, id string, holder string, now time.Time, d store.WebhookDelivery) error {
	ctx, call := s.o.start(ctx, "webhooks.save_delivery")
	err := s.next.SaveDelivery(ctx, tenant, id, holder, now, d)
	call.end(err)
	return err
}

func (s webhooks) Resume(ctx context.Context, tenant string, id string) error {
	ctx, call := s.o.start(ctx, "webhooks.resume")
	err := s.next.Resume(ctx, tenant, id)
	call.end(err)
	return err
}

func (s webhooks) Due(ctx context.Context, now time.Time, limit int) ([]store.WebhookEndpoint, error) {
	ctx, call := s.o.start(ctx, "webhooks.due")
	v, err := s.next.Due(ctx, now, limit)
	call.end(err)
	return v, err
}

// wrap wraps each store of b that is not nil.
func (o *observer) wrap(b store.Backend) store.Backend {
	if b.Tenants != nil {
		b.Tenants = tenants{b.Tenants, o}
	}
	if b.Users != nil {
		b.Users = users{b.Users, o}
	}
	if b.Groups != nil {
		b.Groups = groups{b.Groups, o}
	}
	if v, ok := b.APIKeys.(store.APIKeyVersions); ok {
		b.APIKeys = versionedAPIKeys{apiKeys{b.APIKeys, o}, v}
	} else if b.APIKeys != nil {
		b.APIKeys = apiKeys{b.APIKeys, o}
	}
	if b.Clients != nil {
		b.Clients = clients{b.Clients, o}
	}
	if b.Codes != nil {
		b.Codes = codes{b.Codes, o}
	}
	if b.Interactions != nil {
		b.Interactions = interactions{b.Interactions, o}
	}
	if b.Pushed != nil {
		b.Pushed = pushedRequests{b.Pushed, o}
	}
	if b.AccessTokens != nil {
		b.AccessTokens = accessTokens{b.AccessTokens, o}
	}
	if b.Pictures != nil {
		b.Pictures = pictureCredentials{b.Pictures, o}
	}
	if b.Passkeys != nil {
		b.Passkeys = passkeys{b.Passkeys, o}
	}
	if b.SigningKeys != nil {
		b.SigningKeys = signingKeys{b.SigningKeys, o}
	}
	if b.Events != nil {
		b.Events = events{b.Events, o}
	}
	if b.Webhooks != nil {
		b.Webhooks = webhooks{b.Webhooks, o}
	}
	return b
}
