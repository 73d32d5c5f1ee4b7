package pipeline

import (
	"bytes"
	"net/url"
	"strings"

	"vitrine/schema"
)

// UploadPaths returns the CMS paths of the route table's upload routes (cms.media.create: their
// POST bodies are files, which edge and origin servers let pass their usual body limit).
func UploadPaths() []string {
	var paths []string
	for _, r := range schema.Routes {
		if r.Name == "cms.media.create" && r.Method == "POST" {
			paths = append(paths, r.Path)
		}
	}
	return paths
}

// UploadTarget reports whether a request target (path and query, or an absolute URI) addresses
// one of the upload routes paths (UploadPaths): the CMS interface (/index.php or / with
// rest_route), its first rest_route (the one routed, as fasthttp's Peek takes it), unescaped and
// without one trailing slash, equal to one of paths case-insensitively, as the router matches CMS
// routes. It does not allocate for targets that are not the CMS interface.
func UploadTarget(target []byte, paths []string) bool {
	path, query, _ := bytes.Cut(RequestPath(target), []byte("?"))
	if string(path) != "/index.php" && string(path) != "/" {
		return false
	}
	for len(query) > 0 {
		var kv []byte
		kv, query, _ = bytes.Cut(query, []byte("&"))
		k, v, _ := bytes.Cut(kv, []byte("="))
		if bytes.IndexByte(k, '%') >= 0 {
			if key, err := url.QueryUnescape(string(k)); err == nil {
				k = []byte(key)
			}
		}
		if string(k) != "rest_route" {
			continue
		}
		route, err := url.QueryUnescape(string(v))
		if err != nil {
			return false
		}
		if len(route) > 1 {
			route = strings.TrimSuffix(route, "/")
		}
		for _, u := range paths {
			if strings.EqualFold(route, u) {
				return true
			}
		}
		return false
	}
	return false
}

// RequestPath returns the path and query of a request target, also of one in absolute form
// ("http://host/path?query"; nil when it has no path).
func RequestPath(uri []byte) []byte {
	if len(uri) > 0 && uri[0] != '/' {
		if i := bytes.Index(uri, []byte("://")); i >= 0 {
			rest := uri[i+3:]
			if j := bytes.IndexByte(rest, '/'); j >= 0 {
				return rest[j:]
			}
			return nil
		}
	}
	return uri
}
