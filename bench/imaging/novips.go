//go:build !vips

package imaging

// vipsEngines is empty without the vips build tag.
func vipsEngines() []Engine { return nil }
