package origin

import (
	"bytes"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Login throttles, kept at the origin so that they hold across every edge: per client IP, and
// per account (whoever tries it) so that a distributed guesser is slowed too.
var (
	loginIPThrottle      = throttle{name: "login", limit: 20, window: time.Minute}
	loginAccountThrottle = throttle{name: "login-account", limit: 10, window: 15 * time.Minute}
	registerThrottle     = throttle{name: "register", limit: 10, window: time.Minute}
)

var errBadToken = &schema.Error{Code: schema.CodeUnauthorized, Message: "invalid or expired customer token; sign in again"}

func (s *Server) customerHandlers() {
	s.bind("customer.register", s.register)
	s.bind("customer.login", s.login)
	s.bind("customer.logout", s.logout)
	s.bind("customer.get", s.withCustomer(s.getCustomer))
	s.bind("customer.orders", s.withCustomer(s.customerOrders))
	s.bind("customer.order", s.withCustomer(s.customerOrder))
	s.bind("customer.addresses", s.withCustomer(s.addresses))
	s.bind("customer.addresses.add", s.withCustomer(s.addAddress))
	s.bind("customer.addresses.delete", s.withCustomer(s.deleteAddress))
	s.bind("customer.wishlist", s.withCustomer(s.wishlist))
	s.bind("customer.wishlist.add", s.withCustomer(s.addToWishlist))
	s.bind("customer.wishlist.delete", s.withCustomer(s.removeFromWishlist))
}

// bearer returns the Bearer credential of the request, or nil.
func bearer(ctx *fasthttp.RequestCtx) []byte {
	scheme, cred, ok := bytes.Cut(bytes.TrimSpace(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)), []byte{' '})
	if !ok || !bytes.EqualFold(scheme, []byte("Bearer")) {
		return nil
	}
	return bytes.TrimSpace(cred)
}

// customer returns the customer of the request's session token: nil without one, an error when
// the token is not a live token of this tenant.
func (s *Server) customer(ctx *fasthttp.RequestCtx, rq *request) (*store.Customer, error) {
	tok := bearer(ctx)
	if tok == nil {
		return nil, nil
	}
	if !bytes.HasPrefix(tok, []byte(store.CustomerTokenPrefix)) || len(tok) > 100 {
		return nil, errBadToken
	}
	var c *store.Customer
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		settings, err := tx.Settings(ctx, rq.info)
		if err != nil {
			return err
		}
		c, err = tx.CustomerByToken(ctx, rq.info, store.CustomerTokenHash(string(tok)), settings.TokenTTL)
		return err
	})
	if err == nil && c == nil {
		err = errBadToken
	}
	return c, err
}

// withCustomer wraps a handler that needs a signed-in customer.
func (s *Server) withCustomer(h func(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer)) handlerFunc {
	return func(ctx *fasthttp.RequestCtx, rq *request) {
		c, err := s.customer(ctx, rq)
		if err == nil && c == nil {
			err = &schema.Error{Code: schema.CodeUnauthorized, Message: "a customer token is required: Authorization: Bearer <token> from POST /api/customer/login"}
		}
		if err != nil {
			if schema.ErrorCode(err) == schema.CodeUnauthorized {
				ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="vitrine"`)
			}
			s.failRoute(ctx, rq, err)
			return
		}
		h(ctx, rq, c)
	}
}

type credentialsInput struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
	Name     *string `json:"name"`
}

// tokenResponse is the body of login and registration.
type tokenResponse struct {
	Token     string          `json:"token"`
	ExpiresAt time.Time       `json:"expires_at"`
	Customer  *store.Customer `json:"customer,omitempty"`
}

func (s *Server) register(ctx *fasthttp.RequestCtx, rq *request) {
	var in credentialsInput
	if err := jsonBody(ctx, &in); err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	if in.Email == nil || in.Password == nil {
		s.failRoute(ctx, rq, schema.Invalid("email", "email and password are required"))
		return
	}
	if n := len(*in.Password); n < minPasswordLen || n > maxPasswordLen {
		s.failRoute(ctx, rq, schema.Invalid("password", "password must be %d to %d characters", int64(minPasswordLen), int64(maxPasswordLen)))
		return
	}
	if err := schema.ValidateEmail("email", store.NormalizeEmail(*in.Email)); err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	if err := s.throttled(ctx, rq, registerThrottle); err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	name := ""
	if in.Name != nil {
		name = *in.Name
	}
	hash := hashPassword(*in.Password) // outside the transaction: it may be retried
	token, tokenHash := store.NewCustomerToken()
	var out tokenResponse
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		settings, err := tx.Settings(ctx, rq.info)
		if err != nil {
			return err
		}
		c, err := tx.CreateCustomer(ctx, rq.info, *in.Email, name, hash)
		if err != nil {
			return err
		}
		out = tokenResponse{Token: token, ExpiresAt: tx.Now().Add(settings.TokenTTL), Customer: c}
		return tx.CreateCustomerToken(ctx, rq.info, c.ID, tokenHash, settings.TokenTTL)
	})
	s.respond(ctx, rq, 201, err, out)
}

func (s *Server) login(ctx *fasthttp.RequestCtx, rq *request) {
	var in credentialsInput
	if err := jsonBody(ctx, &in); err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	if in.Email == nil || in.Password == nil || in.Name != nil {
		s.failRoute(ctx, rq, schema.Invalid("email", "the body is {\"email\": ..., \"password\": ...}"))
		return
	}
	email := store.NormalizeEmail(*in.Email)
	if err := s.throttled(ctx, rq, loginIPThrottle); err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	if ok, retry, err := s.db.Throttle(ctx, rq.info, loginAccountThrottle.name+":"+email, loginAccountThrottle.limit, loginAccountThrottle.window); err != nil || !ok {
		if err == nil {
			secs := int(retry/time.Second) + 1
			err = &schema.Error{Code: schema.CodeRateLimited, RetryAfter: secs,
				Message: "too many sign-in attempts for this account; retry in " + strconv.Itoa(secs) + " seconds"}
		}
		s.failRoute(ctx, rq, err)
		return
	}
	var c *store.Customer
	var hash string
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		var err error
		c, hash, err = tx.CustomerCredentials(ctx, rq.info, email)
		return err
	})
	if err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	// An unknown email costs one verification too, and answers exactly as a wrong password.
	if c == nil {
		hash = dummyPasswordHash
	}
	if !verifyPassword(*in.Password, hash) || c == nil {
		s.failRoute(ctx, rq, &schema.Error{Code: schema.CodeUnauthorized, Message: "invalid email or password"})
		return
	}
	token, tokenHash := store.NewCustomerToken()
	var out tokenResponse
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		settings, err := tx.Settings(ctx, rq.info)
		if err != nil {
			return err
		}
		out = tokenResponse{Token: token, ExpiresAt: tx.Now().Add(settings.TokenTTL)}
		return tx.CreateCustomerToken(ctx, rq.info, c.ID, tokenHash, settings.TokenTTL)
	})
	s.respond(ctx, rq, 200, err, out)
}

func (s *Server) logout(ctx *fasthttp.RequestCtx, rq *request) {
	tok := bearer(ctx)
	if tok == nil {
		s.failRoute(ctx, rq, errBadToken)
		return
	}
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		return tx.DeleteCustomerToken(ctx, rq.info, store.CustomerTokenHash(string(tok)))
	})
	s.noContentOr(ctx, rq, err)
}

// noContentOr answers 204, or err when it is not nil.
func (s *Server) noContentOr(ctx *fasthttp.RequestCtx, rq *request, err error) {
	if err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	s.noContent(ctx, rq)
}

func (s *Server) getCustomer(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer) {
	s.reply(ctx, rq, 200, c)
}

// orderSummary is an order in a customer's order history.
type orderSummary struct {
	Reference         string       `json:"reference"`
	Status            string       `json:"status"`
	FulfillmentStatus string       `json:"fulfillment_status"`
	Total             schema.Money `json:"total"`
	ItemCount         int64        `json:"item_count"`
	CreatedAt         time.Time    `json:"created_at"`
}

func (s *Server) customerOrders(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer) {
	args, err := schema.ParseArgs(rq.route, func(n string) (string, bool) {
		return string(ctx.QueryArgs().Peek(n)), ctx.QueryArgs().Has(n)
	})
	if err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[orderSummary]
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		orders, total, err := tx.CustomerOrders(ctx, rq.info, c.ID, (page-1)*perPage, perPage)
		if err != nil {
			return err
		}
		out = schema.Page[orderSummary]{Data: []orderSummary{}, Page: page, PerPage: perPage, Total: total, TotalPages: (total + perPage - 1) / perPage}
		for _, o := range orders {
			var n int64
			for _, it := range o.View.Items {
				n += it.Quantity
			}
			out.Data = append(out.Data, orderSummary{Reference: o.Reference, Status: o.Status, FulfillmentStatus: o.View.FulfillmentStatus,
				Total: o.View.Totals.Total, ItemCount: n, CreatedAt: o.CreatedAt})
		}
		return nil
	})
	s.respond(ctx, rq, 200, err, out)
}

var errOrderNotFound = &schema.Error{Code: schema.CodeNotFound, Message: "order not found"}

func (s *Server) customerOrder(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer) {
	ref, ok := schema.NormalizeOrderReference(pipeline.Param(ctx, "reference"))
	if !ok {
		s.failRoute(ctx, rq, errOrderNotFound)
		return
	}
	var o *store.Order
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		var err error
		o, err = tx.OrderByReference(ctx, rq.info, ref)
		return err
	})
	if err == nil && (o == nil || o.CustomerID != c.ID) {
		err = errOrderNotFound // another customer's order does not exist for this one
	}
	s.respond(ctx, rq, 200, err, &o.View)
}

func (s *Server) addresses(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer) {
	var out []store.SavedAddress
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = tx.Addresses(ctx, rq.info, c.ID)
		return err
	})
	s.respond(ctx, rq, 200, err, schema.List[store.SavedAddress]{Data: out})
}

func (s *Server) addAddress(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer) {
	var in struct {
		schema.Address
		Default bool `json:"default"`
	}
	if err := jsonBody(ctx, &in); err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	var out *store.SavedAddress
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = tx.AddAddress(ctx, rq.info, c.ID, in.Address, in.Default)
		return err
	})
	s.respond(ctx, rq, 201, err, out)
}

func (s *Server) deleteAddress(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer) {
	id, err := pathID(ctx, "address")
	if err == nil {
		err = s.db.Tx(ctx, func(tx *store.Tx) error { return tx.DeleteAddress(ctx, rq.info, c.ID, id) })
	}
	s.noContentOr(ctx, rq, err)
}

func (s *Server) wishlist(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer) {
	var out []store.WishlistItem
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = tx.Wishlist(ctx, rq.info, c.ID)
		return err
	})
	s.respond(ctx, rq, 200, err, schema.List[store.WishlistItem]{Data: out})
}

func (s *Server) addToWishlist(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer) {
	var in struct {
		ProductID *int64 `json:"product_id"`
	}
	if err := jsonBody(ctx, &in); err != nil {
		s.failRoute(ctx, rq, err)
		return
	}
	if in.ProductID == nil || *in.ProductID <= 0 {
		s.failRoute(ctx, rq, schema.Invalid("product_id", "product_id is required: a positive integer"))
		return
	}
	var out []store.WishlistItem
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		p, err := tx.Product(ctx, rq.info, schema.ProductID(*in.ProductID))
		if err != nil || !p.Public() {
			return &schema.Error{Code: schema.CodeNotFound, Field: "product_id", Message: "product not found"}
		}
		if err := tx.AddToWishlist(ctx, rq.info, c.ID, p.ID); err != nil {
			return err
		}
		out, err = tx.Wishlist(ctx, rq.info, c.ID)
		return err
	})
	s.respond(ctx, rq, 200, err, schema.List[store.WishlistItem]{Data: out})
}

func (s *Server) removeFromWishlist(ctx *fasthttp.RequestCtx, rq *request, c *store.Customer) {
	id, err := strconv.ParseInt(pipeline.Param(ctx, "product"), 10, 64)
	if err != nil || id <= 0 {
		s.failRoute(ctx, rq, &schema.Error{Code: schema.CodeNotFound, Message: "wishlist item not found"})
		return
	}
	err = s.db.Tx(ctx, func(tx *store.Tx) error { return tx.RemoveFromWishlist(ctx, rq.info, c.ID, schema.ProductID(id)) })
	s.noContentOr(ctx, rq, err)
}
