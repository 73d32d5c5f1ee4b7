package edge

import (
	"testing"

	"github.com/valyala/fasthttp"
)

func TestIsUpload(t *testing.T) {
	uploads := uploadRoutePaths()
	if len(uploads) != 1 || uploads[0] != "/cms/v2/media" {
		t.Fatalf("upload routes %q", uploads)
	}
	for _, tt := range []struct {
		target string
		want   bool
	}{
		{"/index.php?rest_route=/cms/v2/media", true},
		{"/?rest_route=/cms/v2/media", true},
		{"/index.php?rest_route=/cms/v2/media/", true},
		{"/index.php?rest_route=%2Fcms%2Fv2%2Fmedia", true},
		{"/index.php?rest%5Froute=%2Fcms%2Fv2%2Fmedia", true},
		{"/index.php?a=1&rest_route=/CMS/V2/MEDIA&b=2", true},
		{"http://shop.example/index.php?rest_route=/cms/v2/media", true},
		{"/index.php?rest_route=/cms/v2/media//", false},
		{"/index.php?rest_route=/cms/v2/media/5", false},
		{"/index.php?rest_route=/cms/v2/posts&rest_route=/cms/v2/media", false}, // the first one is routed
		{"/index.php?rest_route=%zz", false},
		{"/index.php?route=/cms/v2/media", false},
		{"/wp-json/cms/v2/media", false},
		{"/cms/v2/media", false},
		{"http://shop.example", false},
		{"", false},
		{"*", false},
	} {
		if got := isUpload(requestPath([]byte(tt.target)), uploads); got != tt.want {
			t.Errorf("isUpload(%q) = %v", tt.target, got)
		}
	}
}

// FuzzIsUpload: any request target is classified without a panic.
func FuzzIsUpload(f *testing.F) {
	for _, s := range []string{"/index.php?rest_route=/cms/v2/media", "http://x/?rest_route=%2F", "?", "/?&&=&rest_route", "https://", "/index.php?%"} {
		f.Add(s)
	}
	uploads := uploadRoutePaths()
	f.Fuzz(func(t *testing.T, target string) {
		isUpload(requestPath([]byte(target)), uploads)
	})
}

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
