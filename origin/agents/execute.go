package agents

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// ExecuteInput is the body of POST /agent/v1/execute.
type ExecuteInput struct {
	// Ability names a granted ability.
	Ability *string `json:"ability"`
	// Input is the ability's input (its input schema's default when absent).
	Input json.RawMessage `json:"input"`
	// RequestID names the call: required for an ability that is not read-only, so that a retry
	// never runs it twice. Up to 255 printable ASCII characters; unique within the session.
	RequestID *string `json:"request_id"`
}

// Result is the answer of an ability run through a session, whatever the run's outcome: the
// HTTP status is Status, and the body holds the output or the error (WordPress's shape). A
// replay of a write's answer says so (Replayed, and the header Agent-Replayed: true).
type Result struct {
	Ability   string          `json:"ability"`
	RequestID *string         `json:"request_id"`
	Status    int             `json:"status"`
	Output    json.RawMessage `json:"output,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
	Replayed  bool            `json:"replayed"`
}

// The refusals of execute.
var (
	errAbilityMissing = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: "ability",
		Message: "Missing parameter(s): ability"}
	errNotGranted = &schema.Error{Code: schema.CodeForbidden, CMSCode: "agent_ability_not_granted",
		Message: "This session was not granted that ability: connect again with it."}
	errRequestIDRequired = &schema.Error{Code: schema.CodeInvalid, CMSCode: "agent_request_id_required", Field: "request_id",
		Message: "request_id is required for an ability that changes something: a retry with the same request_id never runs it twice."}
	errRequestIDReused = &schema.Error{Code: schema.CodeUnprocessable, CMSCode: "agent_request_id_reused", Field: "request_id",
		Message: "This request_id was used for another ability or another input in this session: use a new request_id."}
	errInProgress = &schema.Error{Code: schema.CodeConflict, CMSCode: "agent_request_in_progress", RetryAfter: 1,
		Message: "A call with this request_id is still running: retry shortly to get its answer."}
	errOutcomeUnknown = &schema.Error{Code: schema.CodeConflict, CMSCode: "agent_outcome_unknown",
		Message: "A call with this request_id was cut off while it ran: it may or may not have taken effect, and it will not run again. Check, then use a new request_id."}
)

// validRequestID reports whether id is 1 to 255 printable ASCII characters.
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 255 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// execute runs a granted ability for a session's agent, as the session's user, and audits the
// call whatever its outcome.
func (s *Service) execute(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	start := time.Now()
	sess, user, err := s.session(ctx, rq)
	if sess == nil {
		s.Fail(ctx, rq, err) // no session to audit the call against
		return
	}
	call := &store.AgentCall{At: start}
	var res *Result
	if err == nil {
		res, err = s.executeAs(ctx, rq, sess, user, call)
	}
	if err != nil {
		status, body := errorBody(err)
		call.Status, call.Code = status, codeOf(body)
		s.Fail(ctx, rq, err)
	} else {
		call.Status, call.Code, call.Replayed = res.Status, codeOf(res.Error), res.Replayed
		var h [][2]string
		if res.Replayed {
			h = append(h, [2]string{"Agent-Replayed", "true"})
		}
		s.answer(ctx, rq, res.Status, res, h...)
	}
	call.Duration = time.Since(start)
	if err := s.db.RecordAgentCall(ctx, rq.Info, sess.ID, call); err != nil {
		s.Log.Warn("agent call not audited", "err", err, "session", sess.ID, "ability", call.Ability)
	}
}

// codeOf is the code of a WordPress error body ("" for none).
func codeOf(body json.RawMessage) string {
	var e struct {
		Code string `json:"code"`
	}
	if len(body) > 0 {
		json.Unmarshal(body, &e)
	}
	return e.Code
}

// executeAs is execute's work once the session is known: the refusals of the call itself are
// returned as errors, the ability's run (whatever its outcome) as a Result. call is filled in
// for the audit as the request is read.
func (s *Service) executeAs(ctx *fasthttp.RequestCtx, rq *handler.Request, sess *store.AgentSession, user *schema.User,
	call *store.AgentCall) (*Result, error) {
	// Every call counts against the session's rate, a malformed one too.
	ok, retry, err := s.db.SpendAgentCall(ctx, rq.Info, sess.ID, int64(sess.CallsPerMinute))
	if err != nil {
		return nil, err
	}
	var in ExecuteInput
	decodeErr := handler.JSONBody(ctx, &in)
	if decodeErr == nil {
		if in.Ability != nil {
			call.Ability = *in.Ability
		}
		if in.RequestID != nil {
			call.RequestID = *in.RequestID
		}
		if len(in.Input) > 0 {
			call.InputDigest = digest(in.Input)
		}
	}
	if !ok {
		secs := max(1, int(math.Ceil(retry.Seconds())))
		return nil, &schema.Error{Code: schema.CodeRateLimited, CMSCode: "agent_rate_limited", RetryAfter: secs,
			Message: "This session made its " + strconv.Itoa(sess.CallsPerMinute) + " calls a minute: retry in " + strconv.Itoa(secs) + " seconds."}
	}
	if decodeErr != nil {
		return nil, decodeErr
	}
	if in.Ability == nil {
		return nil, errAbilityMissing
	}
	a := s.reg.Ability(*in.Ability)
	if a == nil {
		return nil, errAbilityNotFound
	}
	if !slices.Contains(sess.Abilities, a.Name) {
		return nil, errNotGranted
	}
	if in.RequestID != nil && !validRequestID(*in.RequestID) {
		return nil, schema.InvalidParam("request_id", "request_id must be 1 to 255 printable ASCII characters.")
	}
	res := &Result{Ability: a.Name, RequestID: in.RequestID}
	if a.Annotations.Readonly {
		return s.result(ctx, res, user, a, in.Input), nil
	}
	if in.RequestID == nil {
		return nil, errRequestIDRequired
	}
	// A write: checked before it is claimed, so that a refused input never uses up its id.
	checked, err := check(user, a, in.Input)
	if err != nil {
		res.Status, res.Error = errorBody(err)
		return res, nil
	}
	d := digest(checked)
	call.InputDigest = d
	claim := &store.AgentRequest{SessionID: sess.ID, RequestID: *in.RequestID, Ability: a.Name, InputDigest: d,
		LeaseUntil: time.Now().Add(ClaimLease)}
	prior, err := s.db.ClaimAgentRequest(ctx, rq.Info, claim)
	if err != nil {
		return nil, err
	}
	if prior != nil {
		return s.replay(ctx, rq, prior, a.Name, d)
	}
	s.perform1(ctx, res, user, a, checked)
	body, err := json.Marshal(res)
	if err == nil {
		err = s.db.FinishAgentRequest(ctx, rq.Info, sess.ID, *in.RequestID, res.Status, body)
	}
	if err != nil {
		// The answer still goes out; a duplicate finds the claim running, then cut off.
		s.Log.Warn("agent request's answer not kept", "err", err, "session", sess.ID, "request_id", *in.RequestID)
	}
	return res, nil
}

// result checks and runs a (read-only) ability into res.
func (s *Service) result(ctx *fasthttp.RequestCtx, res *Result, user *schema.User, a *Ability, raw json.RawMessage) *Result {
	in, err := check(user, a, raw)
	if err != nil {
		res.Status, res.Error = errorBody(err)
		return res
	}
	s.perform1(ctx, res, user, a, in)
	return res
}

// perform1 runs a checked ability into res, and announces what it wrote
// (Vitrine-Write-Version).
func (s *Service) perform1(ctx *fasthttp.RequestCtx, res *Result, user *schema.User, a *Ability, in json.RawMessage) {
	out, wrote, err := s.perform(ctx, user, a, in)
	if wrote > 0 {
		pipeline.SetWriteVersion(&ctx.Response.Header, wrote)
	}
	if err != nil {
		if schema.ErrorCode(err) == schema.CodeInternal {
			s.Log.Error("ability failed", "ability", a.Name, "err", err)
		}
		res.Status, res.Error = errorBody(err)
		return
	}
	res.Status, res.Output = http.StatusOK, out
}

// replay answers a duplicate of a claimed write: the claim's answer once it is done (waiting up
// to ReplayWait for a run in progress), a refusal when the duplicate is not one (another
// ability or input), or agent_outcome_unknown when the run was cut off.
func (s *Service) replay(ctx *fasthttp.RequestCtx, rq *handler.Request, prior *store.AgentRequest, ability string, d []byte) (*Result, error) {
	deadline := time.Now().Add(ReplayWait)
	wait := 10 * time.Millisecond
	for {
		if prior.Ability != ability || !bytes.Equal(prior.InputDigest, d) {
			return nil, errRequestIDReused
		}
		now := time.Now()
		switch {
		case prior.State == store.AgentRequestDone:
			var res Result
			if err := json.Unmarshal(prior.Answer, &res); err != nil {
				return nil, err
			}
			res.Replayed = true
			return &res, nil
		case now.After(prior.LeaseUntil):
			return nil, errOutcomeUnknown
		case now.After(deadline):
			return nil, errInProgress
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errInProgress
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
		var err error
		if prior, err = s.db.AgentRequest(ctx, rq.Info, prior.SessionID, prior.RequestID); err != nil {
			return nil, err
		}
	}
}
