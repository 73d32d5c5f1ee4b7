package origin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Post-purchase throttles, kept at the origin per client IP so that they hold across edges.
// Every request counts, whatever its outcome.
var (
	trackingThrottle = handler.Throttle{Name: "tracking", Limit: 10, Window: time.Minute}
	returnThrottle   = handler.Throttle{Name: "return", Limit: 10, Window: time.Minute}
	// orderProofThrottle counts wrong emails sent for one order reference, from any IP, so that
	// a leaked reference does not let a distributed guesser try emails at leisure. It counts
	// references that do not exist the same way, so it tells nothing about them.
	orderProofThrottle = handler.Throttle{Name: "order-proof", Limit: 20, Window: time.Hour}
)

// postPurchaseHandlers registers order tracking, returns, the newsletter and contact forms, and
// the staff routes of returns, messages and checkout settings.
func (s *Server) postPurchaseHandlers() {
	s.bind("tracking", s.tracking)
	s.bind("orders.return", s.submitReturn)
	s.bind("newsletter.subscribe", s.subscribe)
	s.bind("contact", s.contact)
	s.bind("admin.returns.list", s.listReturns)
	s.bind("admin.returns.get", s.getReturn)
	s.bind("admin.returns.transition", s.transitionReturn)
	s.bind("admin.newsletter.list", s.listSubscribers)
	s.bind("admin.contact.list", s.listContactMessages)
	s.bind("admin.contact.update", s.updateContactMessage)
	s.adminCommerceHandlers()
}

// orderProof is what a caller presents to claim an order: an email and a customer token, each
// optional.
type orderProof struct {
	email    string // normalised; "" when none was sent
	customer *store.Customer
}

// orderProof reads the caller's claim: X-Order-Email, else the email query parameter, else
// bodyEmail; and the customer of an Authorization: Bearer token (a token that does not verify
// is a 401, as on every customer route).
func (s *Server) orderProof(ctx *fasthttp.RequestCtx, rq *handler.Request, bodyEmail string) (orderProof, error) {
	email := string(ctx.Request.Header.Peek("X-Order-Email"))
	if email == "" {
		email = string(ctx.QueryArgs().Peek("email"))
	}
	if email == "" {
		email = bodyEmail
	}
	p := orderProof{email: store.NormalizeEmail(email)}
	c, err := s.customers.Customer(ctx, rq)
	if err != nil {
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="vitrine"`)
		return p, err
	}
	p.customer = c
	return p, nil
}

// owns reports whether the claim proves ownership of o: the token of the order's customer, or
// the order's email (compared normalised, in constant time).
func (p orderProof) owns(o *store.Order) bool {
	if o == nil {
		return false
	}
	if p.customer != nil && o.CustomerID != 0 && o.CustomerID == p.customer.ID {
		return true
	}
	if p.email == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(p.email)), sha256.Sum256([]byte(store.NormalizeEmail(o.Email)))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// failedProof counts a wrong email sent for a reference, and refuses past orderProofThrottle.
func (s *Server) failedProof(ctx context.Context, rq *handler.Request, ref string) error {
	th := orderProofThrottle
	ok, retry, err := s.db.Throttle(ctx, rq.Info, th.Name+":"+ref, th.Limit, th.Window)
	if err != nil {
		return err
	}
	if !ok {
		secs := int(retry/time.Second) + 1
		return &schema.Error{Code: schema.CodeRateLimited, RetryAfter: secs,
			Message: "too many wrong emails for this order; retry in " + strconv.Itoa(secs) + " seconds, or sign in"}
	}
	return nil
}

// maskEmail keeps the first character of an email's local part and its domain:
// "ann@example.com" is "a***@example.com".
func maskEmail(email string) string {
	at := strings.LastIndexByte(email, '@')
	if at <= 0 {
		return "***"
	}
	_, n := utf8.DecodeRuneInString(email) // the first character, whole
	return email[:n] + "***" + email[at:]
}

// TrackingLine is an order line in the masked tracking view.
type TrackingLine struct {
	Title        string `json:"title"`
	VariantTitle string `json:"variant_title"`
	Quantity     int64  `json:"quantity"`
}

// MaskedTracking is what anyone holding an order's reference sees: where the order is, not who
// placed it or where it goes.
type MaskedTracking struct {
	Reference         string         `json:"reference"`
	Status            string         `json:"status"`
	FulfillmentStatus string         `json:"fulfillment_status"`
	Email             string         `json:"email" doc:"The order's email, masked: a***@example.com."`
	Items             []TrackingLine `json:"items"`
	ShippingCountry   string         `json:"shipping_country" doc:"ISO 3166-1 alpha-2 code of the shipping address."`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
	Verified          bool           `json:"verified" doc:"Always false: the caller did not prove ownership."`
}

// VerifiedTracking is what the order's owner sees: the whole order view, with its returns.
type VerifiedTracking struct {
	*schema.OrderView
	Returns []ShopperReturn `json:"returns"`
	// Shipments are the order's parcels: carrier, tracking number, status and events.
	Shipments []*store.Shipment `json:"shipments" doc:"The order's parcels: carrier, tracking number, status and events."`
	Verified  bool              `json:"verified" doc:"Always true: the caller proved ownership."`
}

func masked(o *store.Order) *MaskedTracking {
	v := &o.View
	m := &MaskedTracking{Reference: o.Reference, Status: o.Status, FulfillmentStatus: v.FulfillmentStatus, Email: maskEmail(o.Email),
		Items: make([]TrackingLine, 0, len(v.Items)), ShippingCountry: v.ShippingAddress.Country, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
	for _, it := range v.Items {
		m.Items = append(m.Items, TrackingLine{Title: it.Title, VariantTitle: it.VariantTitle, Quantity: it.Quantity})
	}
	return m
}

var errTrackingNotFound = &schema.Error{Code: schema.CodeNotFound, Message: "order not found"}

// tracking answers GET /api/tracking/{reference}. Malformed, unknown and other stores'
// references answer the same 404; the view is masked unless the caller proves ownership.
func (s *Server) tracking(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	if err := trackingThrottle.Spend(ctx, s.db, rq); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	p, err := s.orderProof(ctx, rq, "")
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ref, wellFormed := schema.NormalizeOrderReference(pipeline.Param(ctx, "reference"))
	var out any
	var proved bool
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		out = nil
		var o *store.Order
		if wellFormed {
			var err error
			if o, err = tx.OrderByReference(ctx, rq.Info, ref); err != nil {
				return err
			}
		}
		proved = p.owns(o)
		if o == nil {
			return nil
		}
		if !proved {
			out = masked(o)
			return nil
		}
		returns, err := shopperReturns(ctx, tx, rq.Info, o)
		if err != nil {
			return err
		}
		shipments, err := tx.Shipments(ctx, rq.Info, o.ID)
		if err != nil {
			return err
		}
		view := o.View
		out = &VerifiedTracking{OrderView: &view, Returns: returns, Shipments: shipments, Verified: true}
		return nil
	})
	if err == nil && wellFormed && p.email != "" && !proved {
		err = s.failedProof(ctx, rq, ref)
	}
	if err == nil && out == nil {
		err = errTrackingNotFound
	}
	s.Respond(ctx, rq, 200, err, out)
}
