package edge

import (
	"bytes"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/schema"
)

// Defaults of the media limits of Config.
const (
	DefaultMaxUploadBytes    = 32 << 20
	DefaultUploadReadTimeout = 2 * time.Minute
	DefaultMediaWriteTimeout = 10 * time.Minute
)

// mediaDefaults fills the zero media limits of cfg.
func mediaDefaults(cfg *Config) {
	if cfg.MaxUploadBytes == 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if cfg.UploadReadTimeout == 0 {
		cfg.UploadReadTimeout = DefaultUploadReadTimeout
	}
	if cfg.MediaWriteTimeout == 0 {
		cfg.MediaWriteTimeout = DefaultMediaWriteTimeout
	}
}

// headerReceived returns the edge server's per-request limits, decided on the request line
// before the body is read (fasthttp.Server.HeaderReceived):
//
//   - a media upload (POST to the route table's upload routes, cms.media.create) may have a body
//     of up to MaxUploadBytes, read within UploadReadTimeout: the edge reads it whole, then
//     forwards it, so the origin receives it at the network's speed, not the client's (as
//     nginx's request buffering does). Every other request keeps MaxBodyBytes and the server's
//     read timeout;
//   - a GET or HEAD under schema.UploadsPath (a media file, perhaps large, perhaps to a slow
//     client) may take MediaWriteTimeout to write.
//
// The body is buffered rather than streamed (fasthttp's StreamRequestBody) because streaming is
// a server-wide switch: every body over 8 KiB would become a stream, no body over the limit
// would be refused by the server any more, and an upload's origin connection and write timeout
// would follow the client's speed. The price is memory: at most MaxUploadBytes per upload in
// flight. It does not allocate for requests other than POSTs.
func (s *Server) headerReceived() func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	uploads := uploadRoutePaths()
	upload := fasthttp.RequestConfig{MaxRequestBodySize: s.cfg.MaxUploadBytes, ReadTimeout: s.cfg.UploadReadTimeout}
	media := fasthttp.RequestConfig{WriteTimeout: s.cfg.MediaWriteTimeout}
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		switch {
		case h.IsPost():
			if isUpload(requestPath(h.RequestURI()), uploads) {
				return upload
			}
		case h.IsGet() || h.IsHead():
			if bytes.HasPrefix(requestPath(h.RequestURI()), []byte(schema.UploadsPath)) {
				return media
			}
		}
		return fasthttp.RequestConfig{}
	}
}

// uploadRoutePaths returns the CMS paths of the route table's upload routes (their POST bodies
// are files).
func uploadRoutePaths() []string {
	var paths []string
	for _, r := range schema.Routes {
		if r.Name == "cms.media.create" && r.Method == "POST" {
			paths = append(paths, r.Path)
		}
	}
	return paths
}

// requestPath returns the path and query of a request target, also in absolute form
// ("http://host/path?query").
func requestPath(uri []byte) []byte {
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

// isUpload reports whether a request target (path and query) addresses one of the upload routes:
// the CMS interface (/index.php or / with rest_route), its rest_route, unescaped and without one
// trailing slash, equal to a path of uploads (case-insensitively, as the router matches CMS
// routes).
func isUpload(target []byte, uploads []string) bool {
	path, query, _ := bytes.Cut(target, []byte("?"))
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
		for _, u := range uploads {
			if strings.EqualFold(route, u) {
				return true
			}
		}
		return false // the first rest_route is the one routed (fasthttp's Peek)
	}
	return false
}
