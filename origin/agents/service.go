package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Limits of agent sessions.
const (
	// DefaultSessionLifetime and MaxSessionLifetime bound a session's expires_in.
	DefaultSessionLifetime = time.Hour
	MaxSessionLifetime     = 24 * time.Hour
	MinSessionLifetime     = time.Minute
	// DefaultCallsPerMinute and MaxCallsPerMinute bound a session's calls_per_minute.
	DefaultCallsPerMinute = 60
	MaxCallsPerMinute     = 600
	// MaxActiveSessions is how many unexpired sessions one user may hold.
	MaxActiveSessions = 100
	// ClaimLease bounds a write's run: a claim still running past it was cut off (its origin
	// died), and its outcome is unknown. Far longer than any run (a few in-process calls, each
	// bounded by the store's retry budget).
	ClaimLease = 30 * time.Second
	// ReplayWait is how long a duplicate of a write still running waits for its answer before
	// answering agent_request_in_progress.
	ReplayWait = 10 * time.Second
	// SessionRetention is how long an expired session, its claims and its audit are kept.
	SessionRetention = 7 * 24 * time.Hour
	// StatusCalls is how many audited calls the status answer lists.
	StatusCalls = 20
)

// Service answers the abilities and agent routes. Its fields are set by New.
type Service struct {
	*handler.Responder
	db       *store.DB
	secret   []byte
	dispatch handler.Dispatcher
	reg      *Registry
}

// New returns the service over the built-in abilities (Builtin). secret keys the hash of session
// tokens (the origin's server secret); dispatch runs the abilities' calls as their users
// (origin.Server.ActAs).
func New(r *handler.Responder, db *store.DB, secret []byte, dispatch handler.Dispatcher) *Service {
	reg, err := Builtin()
	if err != nil {
		panic(err.Error()) // the built-in abilities are code: a bad one fails every start-up and test
	}
	return &Service{Responder: r, db: db, secret: secret, dispatch: dispatch, reg: reg}
}

// Registry returns the service's abilities.
func (s *Service) Registry() *Registry { return s.reg }

// Bind attaches the handlers of the abilities and agent routes.
func (s *Service) Bind(t *handler.Table) {
	t.Bind("abilities.list", s.listAbilities)
	t.Bind("abilities.get", s.getAbility)
	t.Bind("abilities.run", s.runAbility)
	t.Bind("abilities.categories.list", s.listCategories)
	t.Bind("abilities.categories.get", s.getCategory)
	t.Bind("agent.connect", s.connect)
	t.Bind("agent.execute", s.execute)
	t.Bind("agent.status", s.status)
}

// Sweep deletes the sessions that expired more than SessionRetention before now, with their
// claims and audit (at most 1000 a round). Maintenance runs it; several origins may at once.
func (s *Service) Sweep(ctx context.Context, now time.Time) (int, error) {
	return s.db.DeleteExpiredAgentSessions(ctx, now.Add(-SessionRetention), 1000)
}

// answer replies a CMS answer: the CMS headers, no caching (every answer here is a user's), and
// the extra headers given.
func (s *Service) answer(ctx *fasthttp.RequestCtx, rq *handler.Request, status int, body any, headers ...[2]string) {
	h := &ctx.Response.Header
	own := make([][2][]byte, 0, len(headers))
	for _, kv := range headers {
		h.Set(kv[0], kv[1])
		own = append(own, [2][]byte{[]byte(kv[0]), []byte(kv[1])})
	}
	handler.CMSHeaders(ctx, rq.Info, own)
	pipeline.SetReplicaVersion(h, rq.Tenant.Version())
	s.Reply(ctx, rq, status, body)
	h.Set(fasthttp.HeaderCacheControl, "no-cache, must-revalidate, max-age=0, no-store, private")
}

// forbidden is WordPress's refusal of a permission check: 401 to no user, 403 to one without
// the capability.
func forbidden(user *schema.User, code, msg string) *schema.Error {
	status := http.StatusUnauthorized
	if user != nil {
		status = http.StatusForbidden
	}
	return &schema.Error{Code: schema.CodeForbidden, CMSCode: code, Message: msg, Status: status}
}

// errorBody renders err as the CMS interface answers it (WordPress's {code, message, data}),
// with its status.
func errorBody(err error) (int, json.RawMessage) {
	var tmp fasthttp.RequestCtx
	pipeline.WriteError(&tmp, schema.CMS, err)
	return tmp.Response.StatusCode(), append(json.RawMessage(nil), tmp.Response.Body()...)
}

// run runs ability a as user with raw input (nil: none): check, then perform.
func (s *Service) run(ctx *fasthttp.RequestCtx, user *schema.User, a *Ability, raw json.RawMessage) (out json.RawMessage, wrote int64, err error) {
	in, err := check(user, a, raw)
	if err != nil {
		return nil, 0, err
	}
	return s.perform(ctx, user, a, in)
}

// check makes WordPress's checks of a run, in its order: the input against the ability's schema
// (400 ability_invalid_input), then the user's permission (401/403 rest_ability_cannot_execute).
// It returns the input the ability runs with.
func check(user *schema.User, a *Ability, raw json.RawMessage) (json.RawMessage, error) {
	in, err := a.CheckInput(raw)
	if err != nil {
		return nil, err
	}
	if !a.Permitted(user) {
		return nil, forbidden(user, "rest_ability_cannot_execute", "Sorry, you are not allowed to execute this ability.")
	}
	return in, nil
}

// perform runs ability a as user with an input that passed check. It returns the output,
// checked against the output schema, and the highest log version the run wrote (0: none).
func (s *Service) perform(ctx *fasthttp.RequestCtx, user *schema.User, a *Ability, in json.RawMessage) (out json.RawMessage, wrote int64, err error) {
	r := &Run{outer: ctx, user: user, dispatch: s.dispatch}
	defer func() {
		if p := recover(); p != nil {
			// A bug in an ability is its run's failure, as WordPress catches a callback's
			// exception (ability_callback_exception); the origin keeps serving.
			s.Log.Error("ability panicked", "ability", a.Name, "panic", fmt.Sprint(p))
			out, wrote, err = nil, r.wrote, &schema.Error{Code: schema.CodeInternal, CMSCode: "ability_callback_exception",
				Message: fmt.Sprintf("Ability %q failed.", a.Name)}
		}
	}()
	v, err := a.Run(r, in)
	if err != nil {
		return nil, r.wrote, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, r.wrote, err
	}
	if err := a.CheckOutput(b); err != nil {
		s.Log.Error("ability output fails its schema", "ability", a.Name, "err", err)
		return nil, r.wrote, &schema.Error{Code: schema.CodeInternal, CMSCode: "ability_invalid_output",
			Message: fmt.Sprintf("Ability %q has invalid output.", a.Name)}
	}
	return b, r.wrote, nil
}
