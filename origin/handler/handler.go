// Package handler is what every origin handler works with: the request it receives (Request:
// interface, tenant, user, route), the table that binds handlers to the routes of schema.Routes
// (Table), and the one way to decode a body, answer and fail (Responder, DecodeJSON).
//
// The origin's capabilities live in packages of their own under origin/ (origin/customers, and
// the back-office ones to come); each declares its handlers by binding them into a Table, and
// depends on this package, origin/store and schema, never on package origin or on a sibling
// capability.
//
// # Invariants
//
//   - Every route is bound at construction, once: Bind panics on a name the route table lacks or
//     on a second binding, so a misspelt name fails at start-up, never as a silent 404.
//   - A handler answers through a Responder: the status, the body shape, Cache-Control and the
//     request's metric are the Responder's, so every handler answers and fails one way.
//   - No handler keeps a *fasthttp.RequestCtx or a *Request after it returns.
package handler

import (
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/replica"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Request is the state a handler receives about its request.
type Request struct {
	Iface  schema.Interface
	Tenant *replica.Tenant
	Info   *schema.Tenant
	// User is the staff user of the request's application password (nil when none was sent).
	User *schema.User
	// Route is the route of the table the request matched (nil before routing).
	Route *schema.Route
	// FromEdge: the request carries the edge secret, so its client address is believed.
	FromEdge bool
	// Commits are the log versions the request's transactions took.
	Commits []store.LogCommit
}

// Location is the store's time zone (UTC when it names none the system knows).
func (rq *Request) Location() *time.Location {
	loc, err := time.LoadLocation(rq.Info.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// Func is a handler of a route.
type Func func(ctx *fasthttp.RequestCtx, rq *Request)

// Table binds handlers to the routes of a route table by route name: the routes of one name
// (a CMS update answers POST, PUT and PATCH) share one handler, bound once.
type Table struct {
	names map[string]bool
	funcs map[string]Func
}

// NewTable returns an empty table over routes.
func NewTable(routes []schema.Route) *Table {
	t := &Table{names: make(map[string]bool, len(routes)), funcs: map[string]Func{}}
	for i := range routes {
		t.names[routes[i].Name] = true
	}
	return t
}

// Bind attaches h to the routes named name. A name the table lacks, a name bound twice or a nil
// handler is a programming error: Bind panics, so that it fails every test and every start-up.
func (t *Table) Bind(name string, h Func) {
	switch {
	case !t.names[name]:
		panic(fmt.Sprintf("handler: no route %q in the route table", name))
	case t.funcs[name] != nil:
		panic(fmt.Sprintf("handler: route %q bound twice", name))
	case h == nil:
		panic(fmt.Sprintf("handler: nil handler for route %q", name))
	}
	t.funcs[name] = h
}

// Func returns the handler bound to r's name (nil when none is). It is for construction: the
// router keeps each route's handler, nothing is looked up by name at request time.
func (t *Table) Func(r *schema.Route) Func { return t.funcs[r.Name] }

// Call is one request a capability makes through the origin's whole pipeline, in-process, as a
// user (the abilities of agent sessions): Target is a commerce URL path or a CMS rest route,
// either with its query ("/cms/v2/posts?status=draft").
type Call struct {
	Iface  schema.Interface
	Method string
	Target string
	Body   []byte
	// IdempotencyKey is sent as the Idempotency-Key header when set.
	IdempotencyKey string
}

// CallResult is what a Call was answered: status, body and the headers a caller may need.
type CallResult struct {
	Status int
	Body   []byte
	Header map[string]string
}

// Dispatcher runs a Call as user, with the outer request's tenant and client address; the
// origin provides it (origin.Server.ActAs), so a call passes every check the route makes when
// called over HTTP and can never do more than user.
type Dispatcher func(outer *fasthttp.RequestCtx, user *schema.User, c Call) CallResult
