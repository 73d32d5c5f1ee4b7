package media

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"

	"vitrine/edge/outbound"
	"vitrine/origin/media/imaging"
	"vitrine/schema"
)

// maxSideloadRedirects bounds the redirects a sideload follows, each through the outbound
// client's address rule (WordPress's wp_safe_remote_get follows 5).
const maxSideloadRedirects = 5

var (
	errBadURL = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_url", Field: "url",
		Message: "Invalid URL. Provide a valid, publicly reachable HTTP or HTTPS image URL."}
	errNoFilename = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_url", Field: "url",
		Message: "Could not determine a filename from the provided URL."}
	errNotImageURL = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_url", Field: "url",
		Message: "The provided URL does not point to a supported image file."}
	errNoSideload = &schema.Error{Code: schema.CodeUnavailable, CMSCode: "rest_upload_unavailable", RetryAfter: 60,
		Message: "Sideloading by URL is not configured on this server."}
)

// imageExtensions are the file extensions a sideload's URL may end with (WordPress checks the
// name before downloading; the content is sniffed after, as for every upload).
var imageExtensions = map[string]bool{".jpg": true, ".jpeg": true, ".jpe": true, ".png": true, ".gif": true, ".webp": true}

// checkSideloadURL validates the url argument (WordPress's: http or https, a host), and returns
// the file name its path ends with, which must name an image.
func checkSideloadURL(raw string) (*url.URL, string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return nil, "", errBadURL
	}
	name := path.Base(u.Path)
	if name == "." || name == "/" || name == "" {
		return nil, "", errNoFilename
	}
	if !imageExtensions[strings.ToLower(path.Ext(name))] {
		return nil, "", errNotImageURL
	}
	return u, name, nil
}

// sideload downloads an image through the outbound client (decision 19: resolved addresses
// checked at connect time, no redirect to a refused address, bounded size and time), at most
// MaxUploadBytes. Every failure to fetch is the caller's URL's: a 400 rest_invalid_url.
func (s *Service) sideload(ctx context.Context, u *url.URL) ([]byte, error) {
	if s.cfg.Client == nil {
		return nil, errNoSideload
	}
	opt := outbound.CallOptions{MaxBody: s.cfg.MaxUploadBytes, Allowlist: s.cfg.SideloadAllowlist}
	for hops := 0; ; hops++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, errBadURL
		}
		resp, err := s.cfg.Client.Do(ctx, req, opt)
		if err != nil {
			var refused *outbound.RefusedError
			if errors.As(err, &refused) {
				return nil, errBadURL
			}
			return nil, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_url", Field: "url",
				Message: "The provided URL could not be downloaded."}
		}
		switch {
		case resp.Status >= 300 && resp.Status < 400 && resp.Header.Get("Location") != "":
			next, err := u.Parse(resp.Header.Get("Location"))
			if err != nil || (next.Scheme != "http" && next.Scheme != "https") || hops >= maxSideloadRedirects {
				return nil, errBadURL
			}
			u = next
			continue
		case resp.Status != http.StatusOK:
			return nil, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_invalid_url", Field: "url",
				Message: "The provided URL could not be downloaded: it answered " + http.StatusText(resp.Status) + "."}
		case resp.Truncated:
			return nil, tooBig(s.cfg.MaxUploadBytes)
		case len(resp.Body) == 0:
			return nil, errNoData
		}
		return resp.Body, nil
	}
}

// sideloadType sniffs a sideloaded file: only images are accepted from a URL.
func sideloadType(data []byte) (string, error) {
	mime, err := imaging.Sniff(data)
	if err == nil && !imaging.IsImage(mime) {
		err = &imaging.Error{Kind: imaging.KindUnsupported, Message: "not an image"}
	}
	return mime, err
}
