package media

import (
	"bytes"
	"net/url"
	"strings"

	"vitrine/schema"
)

// UploadTarget reports whether a request target (path and query, or an absolute URI) addresses
// an upload route of the route table (cms.media.create): the CMS interface (/index.php or /)
// whose first rest_route, unescaped and without one trailing slash, is the route's path,
// case-insensitively as the router matches CMS routes. The origin's server lets such a POST
// carry UploadBodyLimit bytes, every other request its usual limit.
func UploadTarget(target []byte) bool {
	if len(target) > 0 && target[0] != '/' {
		if i := bytes.Index(target, []byte("://")); i >= 0 {
			rest := target[i+3:]
			j := bytes.IndexByte(rest, '/')
			if j < 0 {
				return false
			}
			target = rest[j:]
		}
	}
	path, query, _ := bytes.Cut(target, []byte("?"))
	if string(path) != "/index.php" && string(path) != "/" {
		return false
	}
	for len(query) > 0 {
		var kv []byte
		kv, query, _ = bytes.Cut(query, []byte("&"))
		k, v, _ := bytes.Cut(kv, []byte("="))
		key, err := url.QueryUnescape(string(k))
		if err != nil || key != "rest_route" {
			continue
		}
		route, err := url.QueryUnescape(string(v))
		if err != nil {
			return false
		}
		if len(route) > 1 {
			route = strings.TrimSuffix(route, "/")
		}
		return strings.EqualFold(route, uploadPath())
	}
	return false
}

// uploadPath is the path of the upload route.
func uploadPath() string {
	if r := schema.RouteByName("cms.media.create"); r != nil {
		return r.Path
	}
	return "/cms/v2/media"
}
