package edge

import (
	"testing"

	"github.com/valyala/fasthttp"
)

func TestHeaderReceivedLimits(t *testing.T) {
	cfg := Config{}
	mediaDefaults(&cfg)
	hr := (&Server{cfg: cfg}).headerReceived()
	for _, tt := range []struct {
		method, target string
		want           fasthttp.RequestConfig
	}{
		{"POST", "/index.php?rest_route=/cms/v2/media", fasthttp.RequestConfig{MaxRequestBodySize: DefaultMaxUploadBytes, ReadTimeout: DefaultUploadReadTimeout}},
		{"POST", "/index.php?rest_route=/cms/v2/posts", fasthttp.RequestConfig{}},
		{"PUT", "/index.php?rest_route=/cms/v2/media", fasthttp.RequestConfig{}},
		{"GET", "/cms-content/uploads/2026/11/a.jpg", fasthttp.RequestConfig{WriteTimeout: DefaultMediaWriteTimeout}},
		{"HEAD", "http://shop.example/cms-content/uploads/2026/11/a.jpg", fasthttp.RequestConfig{WriteTimeout: DefaultMediaWriteTimeout}},
		{"GET", "/api/products", fasthttp.RequestConfig{}},
		{"POST", "/cms-content/uploads/2026/11/a.jpg", fasthttp.RequestConfig{}},
	} {
		var h fasthttp.RequestHeader
		h.SetMethod(tt.method)
		h.SetRequestURI(tt.target)
		if got := hr(&h); got != tt.want {
			t.Errorf("%s %s: %+v, want %+v", tt.method, tt.target, got, tt.want)
		}
	}
}
