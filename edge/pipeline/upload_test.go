package pipeline_test

import (
	"testing"

	"vitrine/edge/pipeline"
)

func TestUploadTarget(t *testing.T) {
	uploads := pipeline.UploadPaths()
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
		{"/index.php?_envelope=1&rest_route=/CMS/v2/Media", true},
		{"/api/products?rest_route=/cms/v2/media", false},
		{"/index.php", false},
		{"/index.php?route=/cms/v2/media", false},
		{"/wp-json/cms/v2/media", false},
		{"/cms/v2/media", false},
		{"http://shop.example", false},
		{"", false},
		{"*", false},
	} {
		if got := pipeline.UploadTarget([]byte(tt.target), uploads); got != tt.want {
			t.Errorf("UploadTarget(%q) = %v", tt.target, got)
		}
	}
}

// FuzzUploadTarget: any request target is classified without a panic.
func FuzzUploadTarget(f *testing.F) {
	for _, s := range []string{"/index.php?rest_route=/cms/v2/media", "http://x/?rest_route=%2F", "?", "/?&&=&rest_route", "https://", "/index.php?%"} {
		f.Add(s)
	}
	uploads := pipeline.UploadPaths()
	f.Fuzz(func(t *testing.T, target string) {
		pipeline.UploadTarget([]byte(target), uploads)
	})
}
