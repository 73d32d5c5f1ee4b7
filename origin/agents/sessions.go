package agents

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// Session tokens: "vas_" and 48 hex digits (192 random bits).
const (
	tokenPrefix = "vas_"
	tokenHex    = 48
)

// NewToken returns a new session token.
func NewToken() string {
	var b [tokenHex / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("agents: crypto/rand: " + err.Error())
	}
	return tokenPrefix + hex.EncodeToString(b[:])
}

// WellFormed reports whether tok has a session token's form (nothing is looked up for one that
// does not).
func WellFormed(tok string) bool {
	if len(tok) != len(tokenPrefix)+tokenHex || tok[:len(tokenPrefix)] != tokenPrefix {
		return false
	}
	for _, c := range []byte(tok[len(tokenPrefix):]) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// HashToken is the keyed hash a session is stored and found by: HMAC-SHA256 with the server
// secret, under a label of its own so that it never equals another credential's hash.
func HashToken(secret []byte, tok string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("vitrine agent session\x00"))
	mac.Write([]byte(tok))
	return mac.Sum(nil)
}

// The refusals of the agent routes.
var (
	errNotLoggedIn = &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "rest_not_logged_in",
		Message: "You are not currently logged in: connect with an application password (HTTP Basic)."}
	errPasswordRequired = &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "agent_application_password_required",
		Message: "Connect with an application password (HTTP Basic): a session is bound to the password it was made with."}
	errTokenRequired = &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "agent_token_required",
		Message: "An agent session token is required: Authorization: Bearer vas_…"}
	errTokenInvalid = &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "agent_invalid_token",
		Message: "The agent session token is not valid: it is malformed, unknown, or its application password was revoked."}
	errTokenExpired = &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "agent_session_expired",
		Message: "The agent session has expired: connect again."}
	errSessionNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "agent_session_not_found", Message: "Agent session not found."}
)

// UserRef names a session's user.
type UserRef struct {
	ID   schema.UserID `json:"id"`
	Name string        `json:"name"`
	Slug string        `json:"slug"`
}

func userRef(u *schema.User) UserRef { return UserRef{ID: u.ID, Name: u.DisplayName, Slug: u.Slug} }

// Limits are a session's rate limit: calls_per_minute over a sliding minute, and (in status)
// how many calls it may make now.
type Limits struct {
	CallsPerMinute int    `json:"calls_per_minute"`
	WindowSeconds  int    `json:"window_seconds"`
	Remaining      *int64 `json:"remaining,omitempty"`
}

// Connected is the answer of connect: the session, with its token (in this answer only).
type Connected struct {
	ID        string            `json:"id"`
	Token     string            `json:"token"`
	Label     string            `json:"label"`
	User      UserRef           `json:"user"`
	Abilities []string          `json:"abilities"`
	CreatedAt time.Time         `json:"created_at"`
	ExpiresAt time.Time         `json:"expires_at"`
	Limits    Limits            `json:"limits"`
	Links     map[string][]link `json:"_links"`
}

// ConnectInput is the body of POST /agent/v1/connect.
type ConnectInput struct {
	Abilities      *[]string `json:"abilities"`
	ExpiresIn      *int64    `json:"expires_in"`
	Label          *string   `json:"label"`
	CallsPerMinute *int64    `json:"calls_per_minute"`
}

// check validates the input against the registry and returns the grant, the lifetime and the
// limit, in WordPress's words for request parameters.
func (in *ConnectInput) check(reg *Registry) (grant []string, lifetime time.Duration, perMinute int, err error) {
	if in.Abilities == nil {
		return nil, 0, 0, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: "abilities",
			Message: "Missing parameter(s): abilities"}
	}
	names := reg.Names()
	switch n := len(*in.Abilities); {
	case n == 0:
		return nil, 0, 0, schema.InvalidParam("abilities", "abilities must contain at least 1 item.")
	case n > len(names):
		return nil, 0, 0, schema.InvalidParam("abilities", "abilities must contain at most "+strconv.Itoa(len(names))+" items.")
	}
	for i, a := range *in.Abilities {
		if reg.Ability(a) == nil {
			return nil, 0, 0, schema.InvalidParam("abilities", "abilities["+strconv.Itoa(i)+"] is not one of "+wordList(names)+".")
		}
		if slices.Contains((*in.Abilities)[:i], a) {
			return nil, 0, 0, schema.InvalidParam("abilities", "abilities has duplicate items.")
		}
	}
	lifetime, perMinute = DefaultSessionLifetime, DefaultCallsPerMinute
	if in.ExpiresIn != nil {
		lo, hi := int64(MinSessionLifetime/time.Second), int64(MaxSessionLifetime/time.Second)
		if *in.ExpiresIn < lo || *in.ExpiresIn > hi {
			return nil, 0, 0, schema.InvalidParam("expires_in", "expires_in must be between "+strconv.FormatInt(lo, 10)+
				" (inclusive) and "+strconv.FormatInt(hi, 10)+" (inclusive)")
		}
		lifetime = time.Duration(*in.ExpiresIn) * time.Second
	}
	if in.CallsPerMinute != nil {
		if *in.CallsPerMinute < 1 || *in.CallsPerMinute > MaxCallsPerMinute {
			return nil, 0, 0, schema.InvalidParam("calls_per_minute", "calls_per_minute must be between 1 (inclusive) and "+
				strconv.Itoa(MaxCallsPerMinute)+" (inclusive)")
		}
		perMinute = int(*in.CallsPerMinute)
	}
	if in.Label != nil {
		if err := schema.ValidateText("label", *in.Label, 100, false); err != nil {
			msg := schema.AsError(err).Message
			return nil, 0, 0, schema.InvalidParam("label", msg)
		}
	}
	return slices.Clone(*in.Abilities), lifetime, perMinute, nil
}

// basicPassword returns the application password of a Basic credential.
func basicPassword(ctx *fasthttp.RequestCtx) (string, bool) {
	scheme, cred, _ := bytes.Cut(bytes.TrimSpace(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)), []byte{' '})
	if !bytes.EqualFold(scheme, []byte("Basic")) {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(cred)))
	if err != nil {
		return "", false
	}
	_, pw, ok := bytes.Cut(raw, []byte{':'})
	return string(pw), ok
}

func (s *Service) sessionLinks(rq *handler.Request) map[string][]link {
	st := site(rq)
	return map[string][]link{"execute": {{st.RestURL("/agent/v1/execute")}}, "status": {{st.RestURL("/agent/v1/status")}},
		"abilities": {{st.RestURL(abilitiesBase + "/abilities")}}}
}

// connect makes a session for the user of the request's application password.
func (s *Service) connect(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	if rq.User == nil {
		s.Fail(ctx, rq, errNotLoggedIn)
		return
	}
	password, ok := basicPassword(ctx)
	if !ok {
		s.Fail(ctx, rq, errPasswordRequired)
		return
	}
	var in ConnectInput
	if len(bytes.TrimSpace(ctx.Request.Body())) > 0 {
		if err := handler.JSONBody(ctx, &in); err != nil {
			s.Fail(ctx, rq, err)
			return
		}
	}
	grant, lifetime, perMinute, err := in.check(s.reg)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	sess := &store.AgentSession{UserID: rq.User.ID, Abilities: grant, CallsPerMinute: perMinute}
	if in.Label != nil {
		sess.Label = *in.Label
	}
	token := NewToken()
	if err := s.db.CreateAgentSession(ctx, rq.Info, sess, HashToken(s.secret, token),
		schema.HashAppPassword(s.secret, password), lifetime, MaxActiveSessions); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.answer(ctx, rq, http.StatusCreated, &Connected{ID: sess.ID, Token: token, Label: sess.Label, User: userRef(rq.User),
		Abilities: sess.Abilities, CreatedAt: sess.CreatedAt, ExpiresAt: sess.ExpiresAt,
		Limits: Limits{CallsPerMinute: sess.CallsPerMinute, WindowSeconds: 60}, Links: s.sessionLinks(rq)})
}

// bearer returns the request's Bearer credential, if it has one.
func bearer(ctx *fasthttp.RequestCtx) (string, bool) {
	scheme, cred, _ := bytes.Cut(bytes.TrimSpace(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)), []byte{' '})
	if !bytes.EqualFold(scheme, []byte("Bearer")) {
		return "", false
	}
	return string(bytes.TrimSpace(cred)), true
}

// session authenticates the request's session token. An expired session is returned with
// errTokenExpired (so that the refusal is audited against it).
func (s *Service) session(ctx *fasthttp.RequestCtx, rq *handler.Request) (*store.AgentSession, *schema.User, error) {
	tok, ok := bearer(ctx)
	if !ok {
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="agent"`)
		return nil, nil, errTokenRequired
	}
	if !WellFormed(tok) {
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="agent", error="invalid_token"`)
		return nil, nil, errTokenInvalid
	}
	sess, user, err := s.db.AgentSessionByToken(ctx, rq.Info, HashToken(s.secret, tok))
	switch {
	case err != nil:
		return nil, nil, err
	case sess == nil:
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="agent", error="invalid_token"`)
		return nil, nil, errTokenInvalid
	case !time.Now().Before(sess.ExpiresAt):
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="agent", error="invalid_token"`)
		return sess, user, errTokenExpired
	}
	return sess, user, nil
}

// GrantView is a granted ability as status shows it: permitted says whether the session's user
// may run it now (a grant never adds a capability).
type GrantView struct {
	Name      string `json:"name"`
	Label     string `json:"label"`
	Method    string `json:"method"`
	Readonly  bool   `json:"readonly"`
	Permitted bool   `json:"permitted"`
}

// SessionView is a session as status shows it.
type SessionView struct {
	ID        string      `json:"id"`
	Label     string      `json:"label"`
	User      UserRef     `json:"user"`
	CreatedAt time.Time   `json:"created_at"`
	ExpiresAt time.Time   `json:"expires_at"`
	Expired   bool        `json:"expired"`
	Abilities []GrantView `json:"abilities"`
}

// CallView is an audited call as status shows it.
type CallView struct {
	At          time.Time `json:"at"`
	Ability     string    `json:"ability"`
	RequestID   *string   `json:"request_id"`
	InputDigest string    `json:"input_digest"`
	Status      int       `json:"status"`
	Code        *string   `json:"code"`
	DurationMS  int64     `json:"duration_ms"`
	Replayed    bool      `json:"replayed"`
}

// Status is the answer of GET /agent/v1/status.
type Status struct {
	Session SessionView `json:"session"`
	Limits  Limits      `json:"limits"`
	// Calls are the session's last StatusCalls audited calls, newest first.
	Calls []CallView `json:"calls"`
}

// status answers a session's state: to its token, or to its user or an administrator by id
// (?session=, with an application password).
func (s *Service) status(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var sess *store.AgentSession
	var user *schema.User
	var err error
	if _, isBearer := bearer(ctx); isBearer || rq.User == nil {
		sess, user, err = s.session(ctx, rq)
	} else {
		sess, user, err = s.sessionByID(ctx, rq, string(ctx.QueryArgs().Peek("session")))
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	left, err := s.db.AgentCallsLeft(ctx, rq.Info, sess.ID, int64(sess.CallsPerMinute))
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	calls, err := s.db.AgentCalls(ctx, rq.Info, sess.ID, StatusCalls)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	out := Status{Session: SessionView{ID: sess.ID, Label: sess.Label, User: userRef(user), CreatedAt: sess.CreatedAt,
		ExpiresAt: sess.ExpiresAt, Expired: !time.Now().Before(sess.ExpiresAt), Abilities: []GrantView{}},
		Limits: Limits{CallsPerMinute: sess.CallsPerMinute, WindowSeconds: 60, Remaining: &left}, Calls: []CallView{}}
	for _, name := range sess.Abilities {
		a := s.reg.Ability(name)
		if a == nil {
			continue // an ability since removed from the registry
		}
		out.Session.Abilities = append(out.Session.Abilities, GrantView{Name: a.Name, Label: a.Label, Method: a.Annotations.Method(),
			Readonly: a.Annotations.Readonly, Permitted: a.Permitted(user)})
	}
	for _, c := range calls {
		v := CallView{At: c.At, Ability: c.Ability, InputDigest: hex.EncodeToString(c.InputDigest), Status: c.Status,
			DurationMS: c.Duration.Milliseconds(), Replayed: c.Replayed}
		if c.RequestID != "" {
			v.RequestID = &c.RequestID
		}
		if c.Code != "" {
			v.Code = &c.Code
		}
		out.Calls = append(out.Calls, v)
	}
	s.answer(ctx, rq, http.StatusOK, out)
}

// sessionByID is a session for status, asked by id with an application password: its user, or an
// administrator (manage_options), may read it; to anyone else it does not exist.
func (s *Service) sessionByID(ctx *fasthttp.RequestCtx, rq *handler.Request, id string) (*store.AgentSession, *schema.User, error) {
	if id == "" {
		return nil, nil, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: "session",
			Message: "Missing parameter(s): session"}
	}
	sess, err := s.db.AgentSessionByID(ctx, rq.Info, id)
	if schema.ErrorCode(err) == schema.CodeNotFound || err == nil && sess.UserID != rq.User.ID && !rq.User.Role.Can(schema.CapManageOptions) {
		return nil, nil, errSessionNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	user := rq.User
	if sess.UserID != rq.User.ID {
		if user, err = store.TxValue(ctx, s.db, func(tx *store.Tx) (*schema.User, error) { return tx.User(ctx, rq.Info, sess.UserID) }); err != nil {
			return nil, nil, err
		}
	}
	return sess, user, nil
}

// digest is the SHA-256 of an input's canonical JSON (the claims compare inputs by it).
func digest(input json.RawMessage) []byte {
	sum := sha256.Sum256(canonical(input))
	return sum[:]
}
