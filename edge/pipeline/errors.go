package pipeline

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// statusOf is the one table from error codes to HTTP statuses. A handler that knows better
// (WordPress's 401-versus-403 rule) sets schema.Error.Status.
var statusOf = map[schema.Code]int{
	schema.CodeInvalid:       fasthttp.StatusBadRequest,
	schema.CodeNotFound:      fasthttp.StatusNotFound,
	schema.CodeConflict:      fasthttp.StatusConflict,
	schema.CodeUnauthorized:  fasthttp.StatusUnauthorized,
	schema.CodeForbidden:     fasthttp.StatusForbidden,
	schema.CodeTooLarge:      fasthttp.StatusRequestEntityTooLarge,
	schema.CodeUnsupported:   fasthttp.StatusUnsupportedMediaType,
	schema.CodeRateLimited:   fasthttp.StatusTooManyRequests,
	schema.CodeUnavailable:   fasthttp.StatusServiceUnavailable,
	schema.CodeNotReady:      fasthttp.StatusServiceUnavailable,
	schema.CodeGone:          fasthttp.StatusGone,
	schema.CodeNotAllowed:    fasthttp.StatusMethodNotAllowed,
	schema.CodeUnprocessable: fasthttp.StatusUnprocessableEntity,
	schema.CodePayment:       fasthttp.StatusPaymentRequired,
	schema.CodeInternal:      fasthttp.StatusInternalServerError,
	// A forwarded request whose answer never came: it may have been applied (RFC 9110 15.6.5).
	schema.CodeOutcomeUnknown: fasthttp.StatusGatewayTimeout,
}

// Status returns the HTTP status of an error.
func Status(e *schema.Error) int {
	if e.Status != 0 {
		return e.Status
	}
	if s, ok := statusOf[e.Code]; ok {
		return s
	}
	return fasthttp.StatusInternalServerError
}

// cmsCodeOf derives a WordPress error code when the error does not carry one.
var cmsCodeOf = map[schema.Code]string{
	schema.CodeInvalid:        "rest_invalid_param",
	schema.CodeNotFound:       "rest_no_route",
	schema.CodeConflict:       "rest_conflict",
	schema.CodeUnauthorized:   "rest_not_logged_in",
	schema.CodeForbidden:      "rest_forbidden",
	schema.CodeTooLarge:       "rest_request_too_large",
	schema.CodeUnsupported:    "rest_unsupported_media_type",
	schema.CodeRateLimited:    "rest_rate_limited",
	schema.CodeUnavailable:    "rest_unavailable",
	schema.CodeNotReady:       "rest_unavailable",
	schema.CodeGone:           "rest_already_trashed",
	schema.CodeNotAllowed:     "rest_no_route",
	schema.CodeUnprocessable:  "rest_invalid_param",
	schema.CodePayment:        "rest_payment_failed",
	schema.CodeInternal:       "rest_internal_error",
	schema.CodeOutcomeUnknown: "rest_outcome_unknown",
}

// Content types of the two interfaces.
var (
	ContentTypeCommerce = []byte("application/json; charset=utf-8")
	ContentTypeCMS      = []byte("application/json; charset=UTF-8")
)

// ContentType returns the JSON content type of an interface.
func ContentType(iface schema.Interface) []byte {
	if iface == schema.CMS {
		return ContentTypeCMS
	}
	return ContentTypeCommerce
}

type cmsError struct {
	Code           string  `json:"code"`
	Message        string  `json:"message"`
	Data           cmsData `json:"data"`
	AdditionalData []any   `json:"additional_data,omitempty"`
}

type cmsData struct {
	Status  int                      `json:"status"`
	Params  any                      `json:"params,omitempty"`
	Details map[string]cmsErrDetails `json:"details,omitempty"`
	// JSONErrorCode and JSONErrorMessage describe a body that is not JSON, as WordPress does
	// (4 is PHP's JSON_ERROR_SYNTAX).
	JSONErrorCode    int    `json:"json_error_code,omitempty"`
	JSONErrorMessage string `json:"json_error_message,omitempty"`
	// TermID is the existing term of a menu_exists error.
	TermID int64 `json:"term_id,omitempty"`
}

type cmsErrDetails struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// WriteError answers with err in the interface's error shape. Non-*schema.Error values become a
// generic internal error: their text never reaches the caller.
func WriteError(ctx *fasthttp.RequestCtx, iface schema.Interface, err error) {
	e := schema.AsError(err)
	status := Status(e)
	ctx.Response.ResetBody()
	ctx.SetStatusCode(status)
	ctx.Response.Header.SetContentTypeBytes(ContentType(iface))
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	if e.RetryAfter > 0 {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(e.RetryAfter))
	}
	var body []byte
	if iface == schema.CMS {
		body, _ = schema.MarshalJSON(cmsErrorBody(e, status))
	} else {
		body, _ = schema.MarshalJSON(schema.CommerceError{Error: e.Message, Code: string(e.Code), Field: e.Field,
			RequestID: string(ctx.Response.Header.Peek(HeaderRequestID))})
	}
	ctx.SetBody(body)
}

func cmsErrorBody(e *schema.Error, status int) cmsError {
	code := e.CMSCode
	if code == "" {
		code = cmsCodeOf[e.Code]
	}
	out := cmsError{Code: code, Message: e.Message, Data: cmsData{Status: status}}
	switch code {
	case "rest_invalid_param":
		if len(e.Params) > 0 {
			names := make([]string, 0, len(e.Params))
			for n := range e.Params {
				names = append(names, n)
			}
			sort.Strings(names)
			out.Message = "Invalid parameter(s): " + strings.Join(names, ", ")
			out.Data.Params = e.Params
			out.Data.Details = map[string]cmsErrDetails{}
			for n, msg := range e.Params {
				out.Data.Details[n] = cmsErrDetails{Code: detailCode(msg), Message: msg, Data: e.DetailData[n]}
			}
		} else if e.Field != "" {
			out.Message = "Invalid parameter(s): " + e.Field
			out.Data.Params = map[string]string{e.Field: e.Message}
		}
	case "rest_invalid_json":
		out.Message = "Invalid JSON body passed."
		out.Data.JSONErrorCode, out.Data.JSONErrorMessage = 4, e.Message
	case "rest_missing_callback_param":
		names := strings.Split(strings.TrimPrefix(e.Message, "Missing parameter(s): "), ", ")
		out.Data.Params = names
	case "menu_exists":
		out.Data.TermID = e.TermID
		out.AdditionalData = []any{e.TermID}
	}
	return out
}

// detailCode guesses the WordPress code of one parameter message.
func detailCode(msg string) string {
	switch {
	case strings.Contains(msg, "is not of type"):
		return "rest_invalid_type"
	case strings.Contains(msg, "is not one of"):
		return "rest_not_in_enum"
	case strings.Contains(msg, "must be between"), strings.Contains(msg, "greater than"), strings.Contains(msg, "less than"):
		return "rest_out_of_bounds"
	case strings.Contains(msg, "at most") && strings.Contains(msg, "items"):
		return "rest_too_many_items"
	// The CMS collection arguments (schema/args_cms.go, edge/reads/cmsposts.go).
	case msg == "Invalid date.":
		return "rest_invalid_date"
	case strings.HasSuffix(msg, "has duplicate items."):
		return "rest_duplicate_items"
	case msg == "Status is forbidden.":
		return "rest_forbidden_status"
	case msg == "Invalid menu location.":
		return "rest_invalid_menu_location"
	case strings.Contains(msg, " is not a valid ") && strings.Contains(msg, ". Reason: "):
		return "rest_no_matching_schema" // a oneOf argument (a taxonomy filter) that matched no schema
	case strings.HasSuffix(msg, "is not a valid property of Object."):
		return "rest_additional_properties_forbidden"
	}
	return "rest_invalid_param"
}

// NotFound answers the 404 of an unknown route, which is also the answer for an unknown tenant.
func NotFound(ctx *fasthttp.RequestCtx, iface schema.Interface) {
	if iface == schema.CMS {
		WriteError(ctx, iface, &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_no_route",
			Message: "No route was found matching the URL and request method."})
		return
	}
	WriteError(ctx, iface, &schema.Error{Code: schema.CodeNotFound, Message: "Not found"})
}

// NotReady answers for a tenant whose replica has not had its first checkpoint.
func NotReady(ctx *fasthttp.RequestCtx, iface schema.Interface) {
	WriteError(ctx, iface, &schema.Error{Code: schema.CodeNotReady, CMSCode: "rest_replica_not_ready",
		Message: "This store is still loading; retry shortly", RetryAfter: 1})
}

// WriteJSON answers with v encoded as JSON.
func WriteJSON(ctx *fasthttp.RequestCtx, iface schema.Interface, status int, v any) {
	body, err := schema.MarshalJSON(v)
	if err != nil {
		WriteError(ctx, iface, err)
		return
	}
	ctx.SetStatusCode(status)
	ctx.Response.Header.SetContentTypeBytes(ContentType(iface))
	ctx.SetBody(body)
}

// MaxHeaderBytes bounds a request's line and headers at edges and the origin (fasthttp's read
// buffer; its default, 4 KiB, refused CMS queries with long include lists). Larger requests are
// 431. Forwarded answers' headers may be three times as large: a Link header repeats the query
// for rel=prev and rel=next.
const MaxHeaderBytes = 16 << 10

// ServerErrorHandler answers fasthttp's own request errors (a malformed request, an oversized
// body, a read timeout) in the interface's error shape instead of fasthttp's plain text.
func ServerErrorHandler(ctx *fasthttp.RequestCtx, err error) {
	iface, _ := Classify(ctx)
	var small *fasthttp.ErrSmallBuffer
	if errors.As(err, &small) || errors.Is(err, fasthttp.ErrSmallReadBuffer) {
		// The request line and headers did not fit the read buffer: the path is unknown, so
		// the interface is too. The answer carries both shapes' members.
		ctx.Response.Reset()
		ctx.SetStatusCode(fasthttp.StatusRequestHeaderFieldsTooLarge)
		ctx.Response.Header.SetContentType("application/json; charset=UTF-8")
		ctx.SetBodyString(`{"error":"request line and headers too large","code":"rest_request_header_too_large","message":"The request line and headers are too large.","data":{"status":431}}`)
		ctx.SetConnectionClose()
		return
	}
	switch {
	case err == fasthttp.ErrBodyTooLarge:
		WriteError(ctx, iface, &schema.Error{Code: schema.CodeTooLarge, CMSCode: "rest_request_too_large", Message: "request body too large"})
	case isTimeout(err):
		WriteError(ctx, iface, &schema.Error{Code: schema.CodeInvalid, Message: "request read timed out", Status: fasthttp.StatusRequestTimeout})
	default:
		WriteError(ctx, iface, &schema.Error{Code: schema.CodeInvalid, Message: "malformed HTTP request"})
	}
	ctx.SetConnectionClose()
}

func isTimeout(err error) bool {
	t, ok := err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}
