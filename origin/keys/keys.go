// Package keys is a store's server keys (esk_…) at the origin: the back office's credential
// for its integrations (warehouses, ERPs, reporting). It answers the admin API that makes, lists,
// rolls and revokes keys, and checks the key of every server-key route (Service.Authorize).
//
// # Invariants
//
//   - A key's plaintext exists only in the answer that created it: the database holds its keyed
//     hash (HMAC-SHA256 with the server secret) and its last four characters.
//   - A key is bound to its store, holds a set of scopes, and each key route needs exactly one;
//     a key with no scope calls nothing.
//   - A request is refused in the spec's order, with its words: missing or malformed (401 "API
//     key required"), unknown or revoked (401 "Invalid API key"), expired (401 "API key has
//     expired"), lacking the scope (403 "Missing required scope: <scope>").
//   - Keys never reach an edge: edges forward key routes untouched, and nothing about keys is
//     replicated.
package keys

import (
	"bytes"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Lifetimes of keys.
const (
	// DefaultLifetime is a new key's lifetime when its expires_at is not given.
	DefaultLifetime = 365 * 24 * time.Hour
	// MaxLifetime bounds expires_at: a key that outlives every person who knew of it is a leak
	// waiting to happen.
	MaxLifetime = 5 * 365 * 24 * time.Hour
	// DefaultOverlap is how long a rolled key keeps working when the roll names no end.
	DefaultOverlap = 24 * time.Hour
)

// Service answers the server-key admin routes and checks keys. Its fields are set once.
type Service struct {
	*handler.Responder
	DB *store.DB
	// Secret keys the hash keys are stored by (the origin's server secret).
	Secret []byte
}

// Bind attaches the admin routes' handlers.
func (s *Service) Bind(t *handler.Table) {
	t.Bind("admin.apikeys.list", s.list)
	t.Bind("admin.apikeys.create", s.create)
	t.Bind("admin.apikeys.delete", s.revoke)
	t.Bind("admin.apikeys.roll", s.roll)
}

// The spec's four refusals, word for word.
var (
	errRequired = &schema.Error{Code: schema.CodeUnauthorized, Message: "API key required"}
	errInvalid  = &schema.Error{Code: schema.CodeUnauthorized, Message: "Invalid API key"}
	errExpired  = &schema.Error{Code: schema.CodeUnauthorized, Message: "API key has expired"}
)

func errScope(scope schema.Scope) error {
	return &schema.Error{Code: schema.CodeForbidden, Message: "Missing required scope: " + string(scope)}
}

// Authorize checks the request's server key for a route needing scope, and records its use
// (last_used_at moves at most once a minute). It returns the key, or the spec's refusal.
func (s *Service) Authorize(ctx *fasthttp.RequestCtx, rq *handler.Request, scope schema.Scope) (*store.ServerKey, error) {
	scheme, cred, _ := bytes.Cut(bytes.TrimSpace(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)), []byte{' '})
	cred = bytes.TrimSpace(cred)
	if !bytes.EqualFold(scheme, []byte("Bearer")) || !WellFormed(string(cred)) {
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="vitrine"`)
		return nil, errRequired
	}
	k, err := s.DB.ServerKeyByHash(ctx, rq.Info, Hash(s.Secret, string(cred)))
	switch {
	case err != nil:
		return nil, err
	case k == nil || k.RevokedAt != nil:
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="vitrine", error="invalid_token"`)
		return nil, errInvalid
	}
	now := time.Now()
	if !now.Before(k.ExpiresAt) {
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="vitrine", error="invalid_token"`)
		return nil, errExpired
	}
	if !slices.Contains(k.Scopes, scope) {
		return nil, errScope(scope)
	}
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= time.Minute { // no write at all on most calls
		if err := s.DB.TouchServerKey(ctx, rq.Info, k.ID, now); err != nil {
			s.Log.Warn("server key use not recorded", "err", err, "key", k.ID)
		}
	}
	return k, nil
}

// View is a key as the admin API shows it. Key, the plaintext, is set in the answer that
// created the key only.
type View struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Key        string         `json:"key,omitempty" doc:"The plaintext (esk_…): in the answer that made the key only."`
	Redacted   string         `json:"redacted"`
	Scopes     []schema.Scope `json:"scopes"`
	Status     string         `json:"status" doc:"active, expired or revoked."`
	ExpiresAt  time.Time      `json:"expires_at"`
	RevokedAt  *time.Time     `json:"revoked_at"`
	RolledTo   *string        `json:"rolled_to" doc:"The key this one was rolled to."`
	CreatedAt  time.Time      `json:"created_at"`
	LastUsedAt *time.Time     `json:"last_used_at"`
}

// ViewOf is the admin view of k at now.
func ViewOf(k *store.ServerKey, now time.Time) *View {
	v := &View{ID: k.ID, Name: k.Name, Redacted: Redacted(k.Last4), Scopes: k.Scopes, ExpiresAt: k.ExpiresAt,
		RevokedAt: k.RevokedAt, RolledTo: k.RolledTo, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, Status: "active"}
	if v.Scopes == nil {
		v.Scopes = []schema.Scope{}
	}
	switch {
	case k.RevokedAt != nil:
		v.Status = "revoked"
	case !now.Before(k.ExpiresAt):
		v.Status = "expired"
	}
	return v
}

// New makes a key's plaintext and its stored form, with name, scopes and expiry checked:
// name 1–100 characters, scopes from schema.Scopes without repeats (none is allowed: such a key
// calls nothing), expiry in the future and at most MaxLifetime away (zero: DefaultLifetime).
func New(secret []byte, name string, scopes []schema.Scope, expiresAt, now time.Time) (string, *store.ServerKey, error) {
	if err := schema.ValidateText("name", name, 100, true); err != nil {
		return "", nil, err
	}
	for i, sc := range scopes {
		if !sc.Valid() {
			return "", nil, schema.Invalid("scopes", "unknown scope %q: scopes are read_orders, write_orders and read_analytics", string(sc))
		}
		if slices.Contains(scopes[:i], sc) {
			return "", nil, schema.Invalid("scopes", "scope %q is listed twice", string(sc))
		}
	}
	if expiresAt.IsZero() {
		expiresAt = now.Add(DefaultLifetime)
	}
	if !expiresAt.After(now) {
		return "", nil, schema.Invalid("expires_at", "expires_at must be in the future")
	}
	if expiresAt.After(now.Add(MaxLifetime)) {
		return "", nil, schema.Invalid("expires_at", "expires_at must be within five years")
	}
	plain := Generate()
	return plain, &store.ServerKey{Name: name, Scopes: slices.Clone(scopes), ExpiresAt: expiresAt.UTC(),
		Hash: Hash(secret, plain), Last4: Last4(plain)}, nil
}

func (s *Service) list(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	list, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) ([]*store.ServerKey, error) { return tx.ServerKeys(ctx, rq.Info) })
	now := time.Now()
	out := make([]*View, 0, len(list))
	for _, k := range list {
		out = append(out, ViewOf(k, now))
	}
	s.Respond(ctx, rq, 200, err, out)
}

// CreateKeyInput is the body of POST /api/admin/api-keys: name and scopes are required.
type CreateKeyInput struct {
	Name      *string         `json:"name" doc:"1 to 100 characters."`
	Scopes    *[]schema.Scope `json:"scopes" doc:"Each of read_orders, write_orders, read_analytics at most once; a key with none calls nothing."`
	ExpiresAt *time.Time      `json:"expires_at" doc:"In the future, at most five years away (default: a year from now)."`
}

func (s *Service) create(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CreateKeyInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Name == nil || in.Scopes == nil {
		s.Fail(ctx, rq, schema.Invalid("name", "name and scopes are required"))
		return
	}
	var expires time.Time
	if in.ExpiresAt != nil {
		expires = *in.ExpiresAt
	}
	now := time.Now()
	plain, k, err := New(s.Secret, *in.Name, *in.Scopes, expires, now)
	if err == nil {
		err = s.DB.Tx(ctx, func(tx *store.Tx) error { return tx.CreateServerKey(ctx, rq.Info, k) })
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	v := ViewOf(k, now)
	v.Key = plain
	ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/admin/api-keys/"+k.ID)
	s.Reply(ctx, rq, fasthttp.StatusCreated, v)
}

func (s *Service) revoke(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	_, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.ServerKey, error) {
		return tx.RevokeServerKey(ctx, rq.Info, pipeline.Param(ctx, "id"))
	})
	s.NoContentOr(ctx, rq, err)
}

// RollKeyInput is the body of POST /api/admin/api-keys/{id}/roll (may be empty).
type RollKeyInput struct {
	// OverlapUntil is when the old key stops working (default: DefaultOverlap from now).
	OverlapUntil *time.Time `json:"overlap_until" doc:"When the old key stops working: within 30 days (default: 24 hours from now)."`
	// ExpiresAt is the new key's expiry (default: DefaultLifetime from now).
	ExpiresAt *time.Time `json:"expires_at" doc:"The new key's expiry, at most five years away (default: a year from now)."`
}

func (s *Service) roll(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in RollKeyInput
	if len(bytes.TrimSpace(ctx.Request.Body())) > 0 {
		if err := handler.JSONBody(ctx, &in); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	now := time.Now()
	until := now.Add(DefaultOverlap)
	if in.OverlapUntil != nil {
		if in.OverlapUntil.Before(now) || in.OverlapUntil.After(now.Add(30*24*time.Hour)) {
			s.Fail(ctx, rq, schema.Invalid("overlap_until", "overlap_until must be between now and 30 days from now"))
			return
		}
		until = *in.OverlapUntil
	}
	var expires time.Time
	if in.ExpiresAt != nil {
		expires = *in.ExpiresAt
	}
	// Name and scopes are the old key's: New checks only the expiry here.
	plain, next, err := New(s.Secret, "rolled", nil, expires, now)
	if err == nil {
		next, err = store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.ServerKey, error) {
			return tx.RollServerKey(ctx, rq.Info, pipeline.Param(ctx, "id"), next, until)
		})
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	v := ViewOf(next, now)
	v.Key = plain
	ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/admin/api-keys/"+next.ID)
	s.Reply(ctx, rq, fasthttp.StatusCreated, v)
}
