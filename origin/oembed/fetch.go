package oembed

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"

	"vitrine/edge/outbound"
	"vitrine/schema"
)

// Fetching other sites: every request goes through the one outbound client (edge/outbound),
// which checks the address of every connection it makes. Redirects are followed here, at most
// maxRedirects of them, each hop checked again (URL rules below, then the client's address
// check), as WordPress's wp_safe_remote_get validates every redirect.

// Bounds of outbound requests.
const (
	// maxRedirects bounds the redirects one request follows (WordPress's default).
	maxRedirects = 5
	// MaxProviderBody bounds a provider's answer; a longer one is cut there and refused.
	MaxProviderBody = 512 << 10
	// defaultEmbedHeight is the maxheight sent to providers when the request names none
	// (WordPress's wp_embed_defaults: 1.5 times a 500-pixel width).
	defaultEmbedHeight = 750
)

// userAgent names the proxy to the sites it asks.
const userAgent = "vitrine-oembed/1.0"

// refusal is a request the proxy would not send: a URL outside WordPress's safe-URL rules, or an
// address the outbound client refused. It is logged and counted; the caller sees only 404.
type refusal struct {
	url    string
	reason string
}

func (r *refusal) Error() string { return "oembed: refused " + r.url + ": " + r.reason }

var (
	errNoProvider = errors.New("oembed: no provider for the URL")
	errNoData     = errors.New("oembed: the provider gave no usable oEmbed data")
	errRedirects  = errors.New("oembed: too many redirects")
)

// parseTarget parses the URL to embed.
func parseTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &refusal{raw, "not a URL"}
	}
	return u, nil
}

// checkURL applies WordPress's safe-URL rules (wp_http_validate_url) to one hop: http or https,
// no credentials, a host, port 80, 443 or 8080, and a literal address the client's rule allows
// (names are checked by the client on the address it connects to).
func (s *Service) checkURL(u *url.URL) error {
	raw := u.Redacted()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return &refusal{raw, "only http and https URLs are fetched"}
	case u.User != nil:
		return &refusal{raw, "a URL with credentials"}
	case u.Hostname() == "":
		return &refusal{raw, "no host"}
	}
	if p := u.Port(); !s.cfg.AnyPort && p != "" && p != "80" && p != "443" && p != "8080" {
		return &refusal{raw, "port " + p + " is not 80, 443 or 8080"}
	}
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		if err := outbound.Check(a, s.cfg.AllowAddrs); err != nil {
			return refused(raw, err)
		}
	}
	return nil
}

// refused turns an outbound refusal into a refusal, naming the address's class when the
// reason is an allowlist's (tests run under one).
func refused(raw string, err error) *refusal {
	var re *outbound.RefusedError
	if !errors.As(err, &re) {
		return &refusal{raw, err.Error()}
	}
	reason := re.Error()
	if re.Reason == outbound.ReasonNotAllowed {
		if c := outbound.Classify(re.Addr); c != "" {
			reason += " (" + string(c) + ")"
		}
	}
	return &refusal{raw, reason}
}

// get fetches raw, following redirects; maxBody bounds the body kept (a longer one is
// Truncated). It returns the last answer and the URL that gave it.
func (s *Service) get(ctx context.Context, raw string, maxBody int64) (*outbound.Response, *url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, &refusal{raw, "not a URL"}
	}
	for hop := 0; ; hop++ {
		if err := s.checkURL(u); err != nil {
			return nil, nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, nil, &refusal{u.Redacted(), "not a URL"}
		}
		req.Header.Set("User-Agent", userAgent)
		req.Header.Set("Accept", "application/json, text/xml;q=0.9, text/html;q=0.8, */*;q=0.5")
		s.fetches.Inc()
		resp, err := s.client.Do(ctx, req, outbound.CallOptions{Allowlist: s.cfg.AllowAddrs, MaxBody: maxBody})
		if err != nil {
			var re *outbound.RefusedError
			if errors.As(err, &re) {
				return nil, nil, refused(u.Redacted(), err)
			}
			return nil, nil, err
		}
		switch resp.Status {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			loc := resp.Header.Get("Location")
			if loc == "" {
				return resp, u, nil
			}
			if hop >= maxRedirects {
				return nil, nil, errRedirects
			}
			next, err := u.Parse(loc)
			if err != nil {
				return nil, nil, &refusal{loc, "a redirect to something that is not a URL"}
			}
			u = next
			continue
		}
		return resp, u, nil
	}
}

// fetchProvider asks a provider's endpoint about target (WordPress's WP_oEmbed::fetch): the
// endpoint with maxwidth, maxheight, url, dnt=1 and format=json, or format=xml when the provider
// answers 501 to JSON. Only a whole 2xx answer that parses counts.
func (s *Service) fetchProvider(ctx context.Context, endpoint, target string, width, height int64) (*schema.OEmbed, error) {
	for _, format := range []string{"json", "xml"} {
		u, err := url.Parse(endpoint)
		if err != nil {
			return nil, &refusal{endpoint, "not a URL"}
		}
		q := u.Query()
		q.Set("maxwidth", strconv.FormatInt(width, 10))
		q.Set("maxheight", strconv.FormatInt(height, 10))
		q.Set("url", target)
		q.Set("dnt", "1")
		q.Set("format", format)
		u.RawQuery = q.Encode()
		resp, _, err := s.get(ctx, u.String(), MaxProviderBody)
		if err != nil {
			return nil, err
		}
		if resp.Status == http.StatusNotImplemented {
			continue
		}
		if resp.Status/100 != 2 || resp.Truncated || len(resp.Body) == 0 {
			return nil, errNoData
		}
		var o *schema.OEmbed
		if format == "json" {
			o, err = schema.ParseOEmbedJSON(resp.Body)
		} else {
			o, err = schema.ParseOEmbedXML(resp.Body)
		}
		if err != nil {
			return nil, errNoData
		}
		return o, nil
	}
	return nil, errNoData
}
