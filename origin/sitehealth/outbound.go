package sitehealth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/valyala/fasthttp"

	"vitrine/edge/outbound"
	"vitrine/origin/handler"
)

// OutboundDetails are the facts of the outbound-http test.
type OutboundDetails struct {
	URL string `json:"url"`
	// Status is the answer's HTTP status (0 without an answer); DurationMS the call's time.
	Status     int     `json:"status"`
	DurationMS float64 `json:"duration_ms"`
	// Error says why no answer was read, when none was.
	Error string `json:"error,omitempty"`
}

// outboundHTTP is the outbound-http test, WordPress's dotorg-communication test made through
// the process's outbound client: one GET of OutboundURL, any answer is good (WordPress: any
// answer that is not an error).
func (s *Service) outboundHTTP(_ *fasthttp.RequestCtx, _ *handler.Request) Result {
	return s.checkOutbound()
}

func (s *Service) checkOutbound() Result {
	host := s.cfg.OutboundURL
	if u, err := url.Parse(s.cfg.OutboundURL); err == nil && u.Host != "" {
		host = u.Host
	}
	res := Result{Test: "outbound_http", Badge: security, Status: Good, Label: "Can communicate with " + host}
	d := OutboundDetails{URL: s.cfg.OutboundURL}
	res.Details = &d
	intro := p("The origin sends webhooks, oEmbed lookups and media sideloads through one outbound HTTP client, which refuses private and loopback addresses. This test sends it one request to %s.", esc(s.cfg.OutboundURL))
	fail := func(why string) Result {
		d.Error = why
		res.Status, res.Label = Critical, "Could not reach "+host
		res.Description = intro + p("<span class=\"error\"></span> The request did not get an answer: %s.", esc(why))
		res.Actions = p("Check the origin's outbound network access (firewall, DNS, proxy), or point <code>--health-outbound-url</code> at an address it should reach.")
		return res
	}
	if s.client == nil {
		return fail("this origin has no outbound client")
	}
	req, err := http.NewRequest(http.MethodGet, s.cfg.OutboundURL, nil)
	if err != nil {
		return fail("the URL is not valid")
	}
	resp, err := s.client.Do(context.Background(), req, outbound.CallOptions{Allowlist: s.cfg.OutboundAllowlist,
		Timeout: s.cfg.OutboundTimeout, MaxBody: 1 << 10})
	if err != nil {
		s.log.Info("site health: the outbound test failed", "url", s.cfg.OutboundURL, "err", err)
		return fail(s.why(err, host))
	}
	d.Status, d.DurationMS = resp.Status, ms(resp.Duration)
	res.Description = intro + p("It answered %d in %s.", resp.Status, esc(fmtMS(d.DurationMS)))
	return res
}

// why says why an outbound call failed, in words that name nothing of the platform's own
// network (a resolver's address, a local port); the origin's log has the error itself.
func (s *Service) why(err error, host string) string {
	var (
		refused *outbound.RefusedError
		dns     *net.DNSError
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		name    x509.HostnameError
		record  tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &refused):
		return "refused by the outbound rules: " + refused.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within " + seconds(s.cfg.OutboundTimeout)
	case errors.As(err, &dns):
		return "the name " + host + " did not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection was reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "the address is unreachable"
	case errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &name):
		return "its TLS certificate was not accepted"
	case errors.As(err, &record):
		return "it does not speak TLS"
	default:
		return "the connection failed (the origin's log has the error)"
	}
}
