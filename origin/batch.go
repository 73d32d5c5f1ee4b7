package origin

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/schema"
)

// MaxBatchRequests bounds the requests of one POST /batch/v1 (WordPress's default).
const MaxBatchRequests = 25

// Keys of the user values that mark a request run from a batch.
const (
	batchItemKey     = "vitrine.batch.item"     // the request is a batch item
	batchValidateKey = "vitrine.batch.validate" // pre-checks only: nothing runs
)

// validator runs a route's argument validation without its handler, for batches sent with
// validation=require-all-validate. Routes without one are pre-checked for their route, method,
// batch capability, query arguments and JSON body only.
type validator func(ctx *fasthttp.RequestCtx, rq *handler.Request) error

// batchItem is one request of a batch.
type batchItem struct {
	Method  *string                     `json:"method"`
	Path    *string                     `json:"path"`
	Body    *json.RawMessage            `json:"body"`
	Headers *map[string]json.RawMessage `json:"headers"`
}

// batchResponse is one entry of a batch's answer.
type batchResponse struct {
	Body    json.RawMessage   `json:"body"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
}

func (s *Server) batchHandlers() {
	s.bind("cms.batch", s.batch)
	for _, t := range schema.PostTypes {
		if t.OwnRoutes {
			continue // not batch-capable
		}
		s.validators["cms."+t.RestBase+".create"] = validatePostBody
		s.validators["cms."+t.RestBase+".update"] = validatePostBody
	}
}

func validatePostBody(ctx *fasthttp.RequestCtx, rq *handler.Request) error {
	var in postInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		return err
	}
	return in.validate()
}

// batch answers POST /batch/v1: each request runs through the whole origin pipeline as if sent
// alone, with the batch's own credentials and tenant, one after the other; the answer is 207
// with their responses in order. With validation=require-all-validate every request is first
// pre-checked, and if one fails nothing runs. There is no transaction across requests.
func (s *Server) batch(ctx *fasthttp.RequestCtx, rq *handler.Request) {
	var in struct {
		Validation *string      `json:"validation"`
		Requests   *[]batchItem `json:"requests"`
	}
	if err := handler.JSONBody(ctx, &in); err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	requireAll := false
	if in.Validation != nil {
		switch *in.Validation {
		case "normal":
		case "require-all-validate":
			requireAll = true
		default:
			s.Fail(ctx, rq, schema.InvalidParam("validation", "validation is not one of require-all-validate and normal."))
			return
		}
	}
	if in.Requests == nil {
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: "requests",
			Message: "Missing parameter(s): requests", Params: map[string]string{"requests": "requests is a required property."}})
		return
	}
	items := *in.Requests
	if len(items) > MaxBatchRequests {
		s.Fail(ctx, rq, schema.InvalidParam("requests", "requests must contain at most 25 items."))
		return
	}
	for i, it := range items {
		if it.Method != nil {
			switch strings.ToUpper(*it.Method) {
			case "POST", "PUT", "PATCH", "DELETE":
			default:
				s.Fail(ctx, rq, schema.InvalidParam("requests", "requests["+strconv.Itoa(i)+"][method] is not one of POST, PUT, PATCH, and DELETE."))
				return
			}
		}
		if it.Path == nil {
			s.Fail(ctx, rq, schema.InvalidParam("requests", "requests["+strconv.Itoa(i)+"][path] is a required property of requests["+strconv.Itoa(i)+"]."))
			return
		}
	}
	if requireAll {
		failed := false
		out := make([]*batchResponse, len(items))
		for i := range items {
			r := s.runBatchItem(ctx, &items[i], true)
			if r.Status >= 400 {
				out[i], failed = r, true
			}
		}
		if failed {
			s.Reply(ctx, rq, fasthttp.StatusMultiStatus, map[string]any{"failed": "validation", "responses": out})
			return
		}
	}
	out := make([]*batchResponse, len(items))
	var top int64
	for i := range items {
		out[i] = s.runBatchItem(ctx, &items[i], false)
		if v, err := strconv.ParseInt(out[i].Headers[pipeline.HeaderWriteVersion], 10, 64); err == nil && v > top {
			top = v
		}
	}
	if top > 0 {
		pipeline.SetWriteVersion(&ctx.Response.Header, top)
	}
	s.Reply(ctx, rq, fasthttp.StatusMultiStatus, map[string]any{"responses": out})
}

// batchHeaders are the response headers a batch entry reports.
var batchHeaders = []string{"Location", "Allow", "Link", "X-WP-Total", "X-WP-TotalPages", pipeline.HeaderWriteVersion}

// runBatchItem runs one batch request through the origin's pipeline and returns its response.
func (s *Server) runBatchItem(outer *fasthttp.RequestCtx, it *batchItem, validateOnly bool) *batchResponse {
	path := *it.Path
	route, query, _ := strings.Cut(path, "?")
	if !strings.HasPrefix(route, "/") || strings.ContainsAny(route, "#\x00") {
		return batchError(400, "parse_path_failed", "Could not parse the path.")
	}
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	outer.Request.Header.CopyTo(&req.Header)
	req.Header.Del(fasthttp.HeaderContentLength)
	req.Header.Del("X-HTTP-Method-Override")
	method := "POST"
	if it.Method != nil {
		method = strings.ToUpper(*it.Method)
	}
	req.Header.SetMethod(method)
	uri := "/index.php?rest_route=" + url.QueryEscape(route)
	if query != "" {
		uri += "&" + query
	}
	req.SetRequestURI(uri)
	if it.Headers != nil {
		for k, raw := range *it.Headers {
			var one string
			var many []string
			switch {
			case json.Unmarshal(raw, &one) == nil:
				req.Header.Set(k, one)
			case json.Unmarshal(raw, &many) == nil:
				req.Header.Set(k, strings.Join(many, ", "))
			default:
				return batchError(400, "rest_invalid_param", "headers must be strings or arrays of strings.")
			}
		}
	}
	req.ResetBody()
	if it.Body != nil && !bytes.Equal(bytes.TrimSpace(*it.Body), []byte("null")) {
		req.SetBody(*it.Body)
		req.Header.SetContentType("application/json")
	}
	var sub fasthttp.RequestCtx
	sub.Init(req, outer.RemoteAddr(), nil)
	sub.SetUserValue(batchItemKey, true)
	if validateOnly {
		sub.SetUserValue(batchValidateKey, true)
	}
	s.Handler(&sub)
	resp := &batchResponse{Status: sub.Response.StatusCode(), Headers: map[string]string{}}
	if b := bytes.TrimSpace(sub.Response.Body()); len(b) > 0 && json.Valid(b) {
		resp.Body = append(json.RawMessage(nil), b...)
	} else {
		resp.Body = json.RawMessage("null")
	}
	for _, h := range batchHeaders {
		if v := sub.Response.Header.Peek(h); len(v) > 0 {
			resp.Headers[h] = string(v)
		}
	}
	return resp
}

func batchError(status int, code, msg string) *batchResponse {
	b, _ := json.Marshal(map[string]any{"code": code, "message": msg, "data": map[string]int{"status": status}})
	return &batchResponse{Body: b, Status: status, Headers: map[string]string{}}
}

// batchGate applies the batch rules to a routed request inside a batch: the route must allow
// batching, and in validation mode only the pre-checks run. It reports whether the request was
// answered here.
func (s *Server) batchGate(ctx *fasthttp.RequestCtx, rq *handler.Request, r *schema.Route) bool {
	if ctx.UserValue(batchItemKey) == nil {
		return false
	}
	if !r.Batch {
		s.Fail(ctx, rq, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_batch_not_allowed",
			Message: "The requested route does not support batch requests."})
		return true
	}
	if ctx.UserValue(batchValidateKey) == nil {
		return false
	}
	err := func() error {
		if _, err := requestArgs(ctx, r); err != nil {
			return err
		}
		if v := s.validators[r.Name]; v != nil {
			return v(ctx, rq)
		}
		if body := bytes.TrimSpace(ctx.Request.Body()); len(body) > 0 {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(body, &obj); err != nil {
				return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_json", Message: "Invalid JSON body passed."}
			}
		}
		return nil
	}()
	if err != nil {
		s.Fail(ctx, rq, err)
		return true
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	return true
}
