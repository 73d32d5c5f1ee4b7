package origin

import (
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Form throttles, per client IP at the origin.
var (
	newsletterThrottle = handler.Throttle{Name: "newsletter", Limit: 10, Window: time.Minute}
	contactThrottle    = handler.Throttle{Name: "contact", Limit: 5, Window: time.Minute}
)

// Contact form limits, in bytes.
const (
	maxContactName    = 200
	maxContactSubject = 200
	maxContactMessage = 5000
)

// NewsletterInput is the body of POST /api/newsletter/subscribe.
type NewsletterInput struct {
	Email *string `json:"email"`
}

// Subscribed is the answer of POST /api/newsletter/subscribe, the same for a new and an existing
// subscriber.
type Subscribed struct {
	Subscribed bool `json:"subscribed" doc:"Always true."`
}

// subscribe handles POST /api/newsletter/subscribe {email}. A new and an existing subscriber get
// the same answer, so the form tells nobody who subscribed.
func (s *Server) subscribe(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in NewsletterInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Email == nil {
		s.Fail(ctx, rq, schema.Invalid("email", "email is required"))
		return
	}
	email := store.NormalizeEmail(*in.Email)
	if err := schema.ValidateEmail("email", email); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := newsletterThrottle.Spend(ctx, s.db, rq); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if err := s.db.Tx(ctx, func(tx *store.Tx) error { return tx.Subscribe(ctx, rq.Info, email) }); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Reply(ctx, rq, 200, Subscribed{Subscribed: true})
}

// ContactInput is the body of POST /api/contact.
type ContactInput struct {
	Name    *string `json:"name" doc:"Required, up to 200 bytes."`
	Email   *string `json:"email"`
	Subject *string `json:"subject" doc:"Optional, up to 200 bytes."`
	Message *string `json:"message" doc:"Required, up to 5000 bytes."`
}

// ContactReceipt is the answer of POST /api/contact.
type ContactReceipt struct {
	ID       string `json:"id" doc:"The stored message's id."`
	Received bool   `json:"received" doc:"Always true."`
}

// contact handles POST /api/contact: the message is stored with the client's IP for the
// merchant, who reads it in the admin API.
func (s *Server) contact(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in ContactInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	m := &store.ContactMessage{}
	if in.Name != nil {
		m.Name = *in.Name
	}
	if in.Email != nil {
		m.Email = store.NormalizeEmail(*in.Email)
	}
	if in.Subject != nil {
		m.Subject = *in.Subject
	}
	if in.Message != nil {
		m.Message = *in.Message
	}
	err := schema.ValidateText("name", m.Name, maxContactName, true)
	if err == nil && m.Email == "" {
		err = schema.Invalid("email", "email is required")
	}
	if err == nil {
		err = schema.ValidateEmail("email", m.Email)
	}
	if err == nil {
		err = schema.ValidateText("subject", m.Subject, maxContactSubject, false)
	}
	if err == nil {
		err = schema.ValidateText("message", m.Message, maxContactMessage, true)
	}
	if err == nil {
		err = contactThrottle.Spend(ctx, s.db, rq)
	}
	if err == nil {
		m.ClientIP = string(pipeline.ClientIP(ctx, s.fromEdge(ctx)))
		err = s.db.Tx(ctx, func(tx *store.Tx) error { return tx.InsertContactMessage(ctx, rq.Info, m) })
	}
	s.Respond(ctx, rq, 201, err, ContactReceipt{ID: m.ID, Received: true})
}

func (s *Server) listSubscribers(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[store.Subscriber]
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		subs, total, err := tx.Subscribers(ctx, rq.Info, (page-1)*perPage, perPage)
		out = schema.Page[store.Subscriber]{Data: subs, Page: page, PerPage: perPage, Total: total, TotalPages: (total + perPage - 1) / perPage}
		return err
	})
	s.answer(ctx, rq, err, out)
}

func (s *Server) listContactMessages(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	args, err := schema.ParseArgs(rq.Route, pipeline.Query(ctx))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var handled *bool
	if st := args.Str("status"); st != "" {
		h := st == "handled"
		handled = &h
	}
	page, perPage := int(args.Int("page")), int(args.Int("per_page"))
	var out schema.Page[*store.ContactMessage]
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		ms, total, err := tx.ContactMessages(ctx, rq.Info, handled, (page-1)*perPage, perPage)
		out = schema.Page[*store.ContactMessage]{Data: ms, Page: page, PerPage: perPage, Total: total, TotalPages: (total + perPage - 1) / perPage}
		return err
	})
	s.answer(ctx, rq, err, out)
}

// ContactUpdateInput is the body of PATCH /api/admin/contact-messages/{id}.
type ContactUpdateInput struct {
	Handled *bool `json:"handled"`
}

// updateContactMessage handles PATCH /api/admin/contact-messages/{id} {"handled": bool}.
func (s *Server) updateContactMessage(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in ContactUpdateInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	if in.Handled == nil {
		s.Fail(ctx, rq, schema.Invalid("handled", "handled is required: true or false"))
		return
	}
	out, err := store.TxValue(ctx, s.db, func(tx *store.Tx) (*store.ContactMessage, error) {
		return tx.SetContactHandled(ctx, rq.Info, pipeline.Param(ctx, "id"), *in.Handled)
	})
	s.Respond(ctx, rq, 200, err, out)
}
