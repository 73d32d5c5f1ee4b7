package sitehealth

import (
	"github.com/valyala/fasthttp"

	"vitrine/origin/handler"
)

// authorizationHeader is WordPress's authorization header test: the Authorization header
// reaches the application, which third-party applications (application passwords) need. Here
// a caller is authenticated by it, so an administrator running the test over HTTP has shown it
// works; a request without one (an agent session's in-process call) is told it is missing, as
// WordPress says.
func (s *Service) authorizationHeader(ctx *fasthttp.RequestCtx, _ *handler.Request) Result {
	return authorizationResult(len(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)) > 0)
}

func authorizationResult(present bool) Result {
	res := Result{Test: "authorization_header", Badge: security, Status: Good, Label: "The Authorization header is working as expected",
		Description: p("Applications you approve (application passwords) send their credentials in the Authorization header: if it does not reach the API, they cannot sign in.")}
	if !present {
		res.Status, res.Label = Recommended, "The authorization header is missing"
		res.Description += p("This request carried no Authorization header. Run the test over HTTP with an application password; if it still says so, a proxy in front of the store drops the header.")
	}
	return res
}
