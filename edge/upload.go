package edge

import (
	"bytes"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
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
	uploads := pipeline.UploadPaths()
	upload := fasthttp.RequestConfig{MaxRequestBodySize: s.cfg.MaxUploadBytes, ReadTimeout: s.cfg.UploadReadTimeout}
	media := fasthttp.RequestConfig{WriteTimeout: s.cfg.MediaWriteTimeout}
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		switch {
		case h.IsPost():
			if pipeline.UploadTarget(h.RequestURI(), uploads) {
				return upload
			}
		case h.IsGet() || h.IsHead():
			if bytes.HasPrefix(pipeline.RequestPath(h.RequestURI()), []byte(schema.UploadsPath)) {
				return media
			}
		}
		return fasthttp.RequestConfig{}
	}
}
