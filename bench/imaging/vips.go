//go:build vips

package imaging

import (
	"bytes"
	"fmt"
	"image/jpeg"

	"github.com/davidbyttow/govips/v2/vips"

	mi "vitrine/origin/media/imaging"
)

// vipsEngines returns the libvips engine (built with the vips tag only).
func vipsEngines() []Engine { return []Engine{{Name: "libvips", Make: Vips}} }

// Vips makes every target with libvips's thumbnail operation from the original's bytes (one
// load per target: JPEG shrink-on-load decodes at 1/2, 1/4 or 1/8 scale when the target allows),
// auto-rotated by EXIF, cropped centred for cropping sizes, metadata stripped.
func Vips(src []byte, mime string) ([]Output, error) {
	vips.LoggingSettings(func(string, vips.LogLevel, string) {}, vips.LogLevelError)
	vips.Startup(nil) // once per process; later calls only log
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	var out []Output
	for _, t := range Targets(cfg.Width, cfg.Height) {
		crop := vips.InterestingNone
		if t.Size.Crop {
			crop = vips.InterestingCentre
		}
		ref, err := vips.LoadThumbnailFromBuffer(src, t.Plan.Width, t.Plan.Height, crop, vips.SizeDown, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		var b []byte
		switch mime {
		case mi.WebP:
			b, _, err = ref.ExportWebp(&vips.WebpExportParams{StripMetadata: true, Quality: mi.DefaultQuality(mi.WebP), ReductionEffort: 4})
		default:
			b, _, err = ref.ExportJpeg(&vips.JpegExportParams{StripMetadata: true, Quality: mi.DefaultQuality(mi.JPEG)})
		}
		w, h := ref.Width(), ref.Height()
		ref.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		out = append(out, Output{Name: t.Name, Width: w, Height: h, Bytes: len(b)})
	}
	return out, nil
}
