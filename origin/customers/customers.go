// Package customers is the storefront's customer accounts at the origin: registration and
// sign-in (argon2id password hashes, opaque session tokens stored as hashes), the signed-in
// customer's orders, addresses and wishlist, and the token check other capabilities use
// (Service.Customer, Service.WithCustomer).
//
// # Invariants
//
//   - A password is hashed outside the transaction that stores it (a retried transaction never
//     hashes twice), and a login for an unknown email costs what a wrong password costs.
//   - Sign-in is throttled per client address and per account, in the database, so the limits
//     hold across every edge and origin.
//   - argon2id runs under a memory budget (KDF): past it a sign-in or registration waits a
//     bounded time, then answers 503 with Retry-After; memory never grows with the flood.
//   - A token is valid only for the tenant that issued it.
package customers

import (
	"bytes"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Login throttles, kept at the origin so that they hold across every edge: per client IP, and
// per account (whoever tries it) so that a distributed guesser is slowed too.
var (
	loginIPThrottle      = handler.Throttle{Name: "login", Limit: 20, Window: time.Minute}
	loginAccountThrottle = handler.Throttle{Name: "login-account", Limit: 10, Window: 15 * time.Minute}
	registerThrottle     = handler.Throttle{Name: "register", Limit: 10, Window: time.Minute}
)

var errBadToken = &schema.Error{Code: schema.CodeUnauthorized, Message: "invalid or expired customer token; sign in again"}

// Service answers the customer routes. Its fields are set once, before Bind.
type Service struct {
	*handler.Responder
	DB *store.DB
	// KDF computes password hashes under a memory budget (nil: NewKDF's defaults, set by Bind).
	KDF *KDF
}

// Bind attaches the customer routes' handlers.
func (s *Service) Bind(t *handler.Table) {
	if s.KDF == nil {
		s.KDF = NewKDF(0, 0)
	}
	t.Bind("customer.register", s.register)
	t.Bind("customer.login", s.login)
	t.Bind("customer.logout", s.logout)
	t.Bind("customer.get", s.WithCustomer(s.getCustomer))
	t.Bind("customer.orders", s.WithCustomer(s.customerOrders))
	t.Bind("customer.order", s.WithCustomer(s.customerOrder))
	t.Bind("customer.addresses", s.WithCustomer(s.addresses))
	t.Bind("customer.addresses.add", s.WithCustomer(s.addAddress))
	t.Bind("customer.addresses.delete", s.WithCustomer(s.deleteAddress))
	t.Bind("customer.wishlist", s.WithCustomer(s.wishlist))
	t.Bind("customer.wishlist.add", s.WithCustomer(s.addToWishlist))
	t.Bind("customer.wishlist.delete", s.WithCustomer(s.removeFromWishlist))
}

// bearer returns the Bearer credential of the request, or nil.
func bearer(ctx *fasthttp.RequestCtx) []byte {
	scheme, cred, ok := bytes.Cut(bytes.TrimSpace(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)), []byte{' '})
	if !ok || !bytes.EqualFold(scheme, []byte("Bearer")) {
		return nil
	}
	return bytes.TrimSpace(cred)
}

// Customer returns the customer of the request's session token: nil without one, an error when
// the token is not a live token of this tenant.
func (s *Service) Customer(ctx *fasthttp.RequestCtx, rq *handler.Request) (*store.Customer, error) {
	tok := bearer(ctx)
	if tok == nil {
		return nil, nil
	}
	if !bytes.HasPrefix(tok, []byte(store.CustomerTokenPrefix)) || len(tok) > 100 {
		return nil, errBadToken
	}
	var c *store.Customer
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		settings, err := tx.Settings(ctx, rq.Info)
		if err != nil {
			return err
		}
		c, err = tx.CustomerByToken(ctx, rq.Info, store.CustomerTokenHash(string(tok)), settings.TokenTTL)
		return err
	})
	if err == nil && c == nil {
		err = errBadToken
	}
	return c, err
}

// WithCustomer wraps a handler that needs a signed-in customer.
func (s *Service) WithCustomer(h func(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer)) handler.Func {
	return func(ctx *fasthttp.RequestCtx, rq *handler.Request) {
		c, err := s.Customer(ctx, rq)
		if err == nil && c == nil {
			err = &schema.Error{Code: schema.CodeUnauthorized, Message: "a customer token is required: Authorization: Bearer <token> from POST /api/customer/login"}
		}
		if err != nil {
			if schema.ErrorCode(err) == schema.CodeUnauthorized {
				ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="vitrine"`)
			}
			s.Fail(ctx, rq, err)
			return
		}
		h(ctx, rq, c)
	}
}

// CredentialsInput is the body of registration and login (login refuses name).
type CredentialsInput struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
	Name     *string `json:"name" doc:"Registration only: the customer's name, up to 200 bytes."`
}

// SessionToken is the body of login and registration.
type SessionToken struct {
	Token     string          `json:"token" doc:"The session token, sent as Authorization: Bearer on the customer routes."`
	ExpiresAt time.Time       `json:"expires_at"`
	Customer  *store.Customer `json:"customer,omitempty" doc:"The new customer; registration only."`
}

func (s *Service) register(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CredentialsInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Email == nil || in.Password == nil {
		s.Fail(ctx, rq, schema.Invalid("email", "email and password are required"))
		return
	}
	if n := len(*in.Password); n < minPasswordLen || n > maxPasswordLen {
		s.Fail(ctx, rq, schema.Invalid("password", "password must be %d to %d characters", int64(minPasswordLen), int64(maxPasswordLen)))
		return
	}
	if err := schema.ValidateEmail("email", store.NormalizeEmail(*in.Email)); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := registerThrottle.Spend(ctx, s.DB, rq); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	name := ""
	if in.Name != nil {
		name = *in.Name
	}
	hash, err := s.KDF.hash(ctx, *in.Password) // outside the transaction: it may be retried
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	token, tokenHash := store.NewCustomerToken()
	var out SessionToken
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		settings, err := tx.Settings(ctx, rq.Info)
		if err != nil {
			return err
		}
		c, err := tx.CreateCustomer(ctx, rq.Info, *in.Email, name, hash)
		if err != nil {
			return err
		}
		out = SessionToken{Token: token, ExpiresAt: tx.Now().Add(settings.TokenTTL), Customer: c}
		return tx.CreateCustomerToken(ctx, rq.Info, c.ID, tokenHash, settings.TokenTTL)
	})
	s.Respond(ctx, rq, 201, err, out)
}

func (s *Service) login(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in CredentialsInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Email == nil || in.Password == nil || in.Name != nil {
		s.Fail(ctx, rq, schema.Invalid("email", "the body is {\"email\": ..., \"password\": ...}"))
		return
	}
	email := store.NormalizeEmail(*in.Email)
	if err := loginIPThrottle.Spend(ctx, s.DB, rq); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if ok, retry, err := s.DB.Throttle(ctx, rq.Info, loginAccountThrottle.Name+":"+email, loginAccountThrottle.Limit, loginAccountThrottle.Window); err != nil || !ok {
		if err == nil {
			secs := int(retry/time.Second) + 1
			err = &schema.Error{Code: schema.CodeRateLimited, RetryAfter: secs,
				Message: "too many sign-in attempts for this account; retry in " + strconv.Itoa(secs) + " seconds"}
		}
		s.Fail(ctx, rq, err)
		return
	}
	var c *store.Customer
	var hash string
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		c, hash, err = tx.CustomerCredentials(ctx, rq.Info, email)
		return err
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	// An unknown email costs one verification too, and answers exactly as a wrong password.
	if c == nil {
		hash = dummyPasswordHash
	}
	match, err := s.KDF.verify(ctx, *in.Password, hash)
	if err != nil {
		s.Fail(ctx, rq, err) // the memory budget stayed full: 503, never a verdict on the password
		return
	}
	if !match || c == nil {
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeUnauthorized, Message: "invalid email or password"})
		return
	}
	token, tokenHash := store.NewCustomerToken()
	var out SessionToken
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		settings, err := tx.Settings(ctx, rq.Info)
		if err != nil {
			return err
		}
		out = SessionToken{Token: token, ExpiresAt: tx.Now().Add(settings.TokenTTL)}
		return tx.CreateCustomerToken(ctx, rq.Info, c.ID, tokenHash, settings.TokenTTL)
	})
	s.Respond(ctx, rq, 200, err, out)
}

func (s *Service) logout(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	tok := bearer(ctx)
	if tok == nil {
		s.Fail(ctx, rq, errBadToken)
		return
	}
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		return tx.DeleteCustomerToken(ctx, rq.Info, store.CustomerTokenHash(string(tok)))
	})
	s.NoContentOr(ctx, rq, err)
}

func (s *Service) getCustomer(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	s.Reply(ctx, rq, 200, c)
}

// OrderSummary is an order in a customer's order history.
type OrderSummary struct {
	Reference         string       `json:"reference"`
	Status            string       `json:"status"`
	FulfillmentStatus string       `json:"fulfillment_status"`
	Total             schema.Money `json:"total"`
	ItemCount         int64        `json:"item_count" doc:"Units ordered, over all lines."`
	CreatedAt         time.Time    `json:"created_at"`
}

func (s *Service) customerOrders(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[OrderSummary]
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		orders, total, err := tx.CustomerOrders(ctx, rq.Info, c.ID, (page-1)*perPage, perPage)
		if err != nil {
			return err
		}
		out = schema.Page[OrderSummary]{Data: []OrderSummary{}, Page: page, PerPage: perPage, Total: total, TotalPages: (total + perPage - 1) / perPage}
		for _, o := range orders {
			var n int64
			for _, it := range o.View.Items {
				n += it.Quantity
			}
			out.Data = append(out.Data, OrderSummary{Reference: o.Reference, Status: o.Status, FulfillmentStatus: o.View.FulfillmentStatus,
				Total: o.View.Totals.Total, ItemCount: n, CreatedAt: o.CreatedAt})
		}
		return nil
	})
	s.Respond(ctx, rq, 200, err, out)
}

var errOrderNotFound = &schema.Error{Code: schema.CodeNotFound, Message: "order not found"}

func (s *Service) customerOrder(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	ref, ok := schema.NormalizeOrderReference(pipeline.Param(ctx, "reference"))
	if !ok {
		s.Fail(ctx, rq, errOrderNotFound)
		return
	}
	o, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.Order, error) { return tx.OrderByReference(ctx, rq.Info, ref) })
	if err == nil && (o == nil || o.CustomerID != c.ID) {
		err = errOrderNotFound // another customer's order does not exist for this one
	}
	if err != nil {
		s.Fail(ctx, rq, err) // before &o.View: o is nil for an unknown reference
		return
	}
	s.Reply(ctx, rq, 200, &o.View)
}

func (s *Service) addresses(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	out, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) ([]store.SavedAddress, error) {
		return tx.Addresses(ctx, rq.Info, c.ID)
	})
	s.Respond(ctx, rq, 200, err, schema.List[store.SavedAddress]{Data: out})
}

// AddressInput is the body of POST /api/customer/addresses: an address and whether it becomes
// the default.
type AddressInput struct {
	schema.Address
	Default bool `json:"default"`
}

func (s *Service) addAddress(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	var in AddressInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	out, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) (*store.SavedAddress, error) {
		return tx.AddAddress(ctx, rq.Info, c.ID, in.Address, in.Default)
	})
	s.Respond(ctx, rq, 201, err, out)
}

func (s *Service) deleteAddress(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	id, err := handler.PathID(ctx, "address")
	if err == nil {
		err = s.DB.Tx(ctx, func(tx *store.Tx) error { return tx.DeleteAddress(ctx, rq.Info, c.ID, id) })
	}
	s.NoContentOr(ctx, rq, err)
}

func (s *Service) wishlist(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	out, err := store.TxValue(ctx, s.DB, func(tx *store.Tx) ([]store.WishlistItem, error) { return tx.Wishlist(ctx, rq.Info, c.ID) })
	s.Respond(ctx, rq, 200, err, schema.List[store.WishlistItem]{Data: out})
}

// WishlistInput is the body of POST /api/customer/wishlist.
type WishlistInput struct {
	ProductID *int64 `json:"product_id" doc:"A public product's id."`
}

func (s *Service) addToWishlist(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	var in WishlistInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.ProductID == nil || *in.ProductID <= 0 {
		s.Fail(ctx, rq, schema.Invalid("product_id", "product_id is required: a positive integer"))
		return
	}
	var out []store.WishlistItem
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, err := tx.Product(ctx, rq.Info, schema.ProductID(*in.ProductID))
		if err != nil || !p.Public() {
			return &schema.Error{Code: schema.CodeNotFound, Field: "product_id", Message: "product not found"}
		}
		if err := tx.AddToWishlist(ctx, rq.Info, c.ID, p.ID); err != nil {
			return err
		}
		out, err = tx.Wishlist(ctx, rq.Info, c.ID)
		return err
	})
	s.Respond(ctx, rq, 200, err, schema.List[store.WishlistItem]{Data: out})
}

func (s *Service) removeFromWishlist(ctx *fasthttp.RequestCtx, rq *handler.Request, c *store.Customer) {
	id, err := strconv.ParseInt(pipeline.Param(ctx, "product"), 10, 64)
	if err != nil || id <= 0 {
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeNotFound, Message: "wishlist item not found"})
		return
	}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error { return tx.RemoveFromWishlist(ctx, rq.Info, c.ID, schema.ProductID(id)) })
	s.NoContentOr(ctx, rq, err)
}
