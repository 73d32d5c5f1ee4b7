package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/schema"
)

// Run is one run of an ability: the request it runs within and the user it runs as. Its calls go
// through the origin's whole pipeline in-process (handler.Dispatcher), so every route's
// validation and permission checks apply to them. A Run is used by one goroutine, within its
// request.
type Run struct {
	outer    *fasthttp.RequestCtx
	user     *schema.User
	dispatch handler.Dispatcher
	// wrote is the highest log version the run's calls wrote (Vitrine-Write-Version), 0 if none.
	wrote int64
}

// User is the user the run acts as.
func (r *Run) User() *schema.User { return r.user }

// CMS calls a CMS route (target: a rest route with its query, "/cms/v2/posts?search=tea") with
// body (marshalled as JSON when not nil) and decodes a successful answer into out (when not nil).
// An answer of 400 or more is returned as the error the route answered.
func (r *Run) CMS(method, target string, body, out any) error {
	_, err := r.call(schema.CMS, method, target, body, out)
	return err
}

// CMSPage reads a page of a CMS collection (GET target) into out and returns the collection's
// total (X-WP-Total).
func (r *Run) CMSPage(target string, out any) (int, error) {
	h, err := r.call(schema.CMS, "GET", target, nil, out)
	if err != nil {
		return 0, err
	}
	total, _ := strconv.Atoi(h["X-WP-Total"])
	return total, nil
}

// Commerce calls a commerce route (target: a URL path with its query) as CMS does.
func (r *Run) Commerce(method, target string, body, out any) error {
	_, err := r.call(schema.Commerce, method, target, body, out)
	return err
}

func (r *Run) call(iface schema.Interface, method, target string, body, out any) (map[string]string, error) {
	c := handler.Call{Iface: iface, Method: method, Target: target}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		c.Body = b
	}
	res := r.dispatch(r.outer, r.user, c)
	if v, err := strconv.ParseInt(res.Header[pipeline.HeaderWriteVersion], 10, 64); err == nil && v > r.wrote {
		r.wrote = v
	}
	if res.Status >= 400 || res.Status < 200 {
		return nil, callError(iface, res)
	}
	if out != nil {
		if err := json.Unmarshal(res.Body, out); err != nil {
			return nil, fmt.Errorf("agents: %s %s answered what its ability cannot read: %w", method, target, err)
		}
	}
	return res.Header, nil
}

// callError is the error a route answered, as the run's own: a CMS route's WordPress error
// keeps its code, message and status; a commerce route's error keeps its message and status, with
// the code commerce_<code>. An answer that is neither is an internal error.
func callError(iface schema.Interface, res handler.CallResult) error {
	status := res.Status
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	code := codeOfStatus(status)
	if iface == schema.CMS {
		var e struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(res.Body, &e) == nil && e.Code != "" {
			return &schema.Error{Code: code, CMSCode: e.Code, Message: e.Message, Status: status}
		}
	} else {
		var e schema.CommerceError
		if json.Unmarshal(res.Body, &e) == nil && e.Code != "" {
			return &schema.Error{Code: code, CMSCode: "commerce_" + e.Code, Message: e.Error, Field: e.Field, Status: status}
		}
	}
	return &schema.Error{Code: schema.CodeInternal, Message: "internal error", Status: http.StatusInternalServerError}
}

// codeOfStatus is the schema code of an HTTP error status.
func codeOfStatus(status int) schema.Code {
	switch status {
	case 400:
		return schema.CodeInvalid
	case 401:
		return schema.CodeUnauthorized
	case 403:
		return schema.CodeForbidden
	case 404:
		return schema.CodeNotFound
	case 405:
		return schema.CodeNotAllowed
	case 409:
		return schema.CodeConflict
	case 410:
		return schema.CodeGone
	case 413:
		return schema.CodeTooLarge
	case 415:
		return schema.CodeUnsupported
	case 422:
		return schema.CodeUnprocessable
	case 429:
		return schema.CodeRateLimited
	case 503:
		return schema.CodeUnavailable
	case 504:
		return schema.CodeOutcomeUnknown
	}
	if status < 500 {
		return schema.CodeInvalid
	}
	return schema.CodeInternal
}
